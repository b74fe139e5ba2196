// Package harness is what the suites (suites/seccomp, suites/apparmor,
// suites/profiles) share: discovering the cluster under test and reading
// the suite process's environment (Env: a suite package reads neither the
// environment nor the cluster's nodes itself), configuring
// k8s.io/kubernetes/test/e2e/framework, declaring one spec per catalogue id
// (API server rules once, kubelet rules once per worker), asking the oracle
// what each spec must show, acting on the cluster and its nodes,
// observing, and recording a verdict per spec for the JUnit report
// (Scenario.Judge for the oracle's rules, RecordPass for skewproof's own).
//
// It holds no expectation of its own: those come from package skew.
package harness

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"

	. "github.com/onsi/ginkgo/v2"

	"github.com/hashicorp/go-version"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// Node is one node of the cluster: a worker the kubelet rules run on
// (Env.Workers), or any Linux node (Env.Nodes).
type Node struct {
	Name    string
	Kubelet *version.Version
	Host    skew.HostFacts
	slow    bool // a User-Mode Linux node (nodefacts.AppArmorKernelLabel)
	// Untestable says why the node's kubelet rules cannot run (not Ready;
	// cordoned on an own cluster); they are reported fail on an own
	// cluster, skip elsewhere. Empty: testable.
	Untestable string
	// ControlPlane: a control-plane node (nodefacts.IsControlPlane).
	ControlPlane bool
}

// Env is the cluster under test, discovered before the spec tree is built
// (kubelet specs are generated per worker), and the settings of this suite
// process: the one place the suites learn either from.
var Env struct {
	Kubeconfig string
	Cluster    string
	Config     *rest.Config
	Client     kubernetes.Interface
	APIServer  *version.Version
	Workers    []Node
	// Own says whether skewproof brought this cluster up itself
	// (SKEWPROOF_OWN_CLUSTER): what it set up there must be there, so a
	// missing part fails a spec instead of skipping it (SetUpMissing).
	Own bool
	// Nodes is every Linux node (kubernetes.io/os=linux), control plane
	// included, testable or not, sorted by name; unlike Workers, whatever
	// SKEWPROOF_WORKERS says.
	Nodes []Node
	// NodeAccess is how the nodes are reached from this host
	// (SKEWPROOF_NODE_ACCESS; probed once when unset): NodeShell needs
	// nodeaccess.Docker.
	NodeAccess nodeaccess.Access
	// AgentImage is the node agent image present on every node
	// (SKEWPROOF_AGENT_IMAGE; empty: none given); AgentImageNote says why
	// it has no apparmor_parser (SKEWPROOF_AGENT_IMAGE_NOTE; empty: it has
	// one).
	AgentImage, AgentImageNote string
	// Keep: leave what the suites created (SKEWPROOF_KEEP): no suite's
	// cleanup runs.
	Keep bool
	// ScaleNodes is the number of simulated nodes of
	// profiles/node-status/scale (SKEWPROOF_SCALE_NODES, default 500).
	ScaleNodes int
	// ProfilesDeleteCRDs: the profiles suite's cleanup also deletes the
	// profile CRDs (SKEWPROOF_PROFILES_DELETE_CRDS).
	ProfilesDeleteCRDs bool
}

// defaultScaleNodes is Env.ScaleNodes unless SKEWPROOF_SCALE_NODES says
// otherwise.
const defaultScaleNodes = 500

// configureFramework sets up k8s.io/kubernetes/test/e2e/framework. Its
// command-line flags are registered on a flag set of their own, never on
// the suite binary's: the runner's interface stays the SKEWPROOF_*
// environment and the -ginkgo.* flags, and the framework gets its
// defaults, overridden below where the suites need something else.
func configureFramework(kubeconfig string) {
	fs := flag.NewFlagSet("e2e-framework", flag.ContinueOnError)
	framework.RegisterCommonFlags(fs)
	framework.RegisterClusterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		panic(err)
	}
	tc := &framework.TestContext
	tc.KubeConfig = kubeconfig
	tc.KubeContext = ""
	// No cloud: the framework's null provider, no node killer, no log
	// gathering over ssh, no metrics or resource-usage gathering, nothing
	// read from a Kubernetes source tree.
	tc.Provider = "skeleton"
	tc.RepoRoot = ""
	tc.DisableLogDump = true
	tc.DumpLogsOnFailure = false
	tc.GatherKubeSystemResourceUsageData = "false"
	tc.GatherMetricsAfterTest = "false"
	tc.GatherSuiteMetricsAfterTest = false
	tc.GatherLogsSizes = false
	tc.ReportDir = "" // the JUnit file is written by package reports
	tc.AllowedNotReadyNodes = -1
	tc.MinStartupPods = -1
	tc.E2EDockerConfigFile = ""
	// A namespace per spec, deleted after it (failed or not), after its
	// default service account exists; labelled so that the runner and
	// DeleteLeftovers find it.
	tc.DeleteNamespace = true
	tc.DeleteNamespaceOnFailure = true
	tc.VerifyServiceAccount = true
	tc.CreateTestingNS = createTestingNS
}

func fakeEnv(apiserver, nodes string) error {
	var err error
	if apiserver == "" {
		apiserver = "1.37.2"
	}
	if Env.APIServer, err = skew.ParseReleaseVersion(apiserver); err != nil {
		return err
	}
	for _, f := range strings.Split(nodes, ",") {
		name, ver, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return fmt.Errorf("%s: want name=version, got %q", senv.Nodes, f)
		}
		v, err := skew.ParseReleaseVersion(ver)
		if err != nil {
			return err
		}
		Env.Workers = append(Env.Workers, Node{Name: name, Kubelet: v, Host: hostFacts(name, "containerd", nil)})
	}
	Env.Nodes = append([]Node(nil), Env.Workers...)
	Env.NodeAccess, Env.ScaleNodes = nodeaccess.None, defaultScaleNodes
	// No API server: the specs are listed (--ginkgo.dry-run), or run and
	// fail in the framework's set-up, which finds no kubeconfig. The host
	// keeps the framework from looking for an in-cluster configuration
	// while it reads its settings; nothing ever connects to it.
	configureFramework("")
	framework.TestContext.Host = "https://dry-run.invalid"
	return nil
}

// hostFacts are the facts of a node's host: the kernel this process runs
// on (kind nodes share it), unless SKEWPROOF_APPARMOR_NODES says otherwise
// for the node; the container runtime from node.status.nodeInfo.
// containerRuntimeVersion ("containerd://1.7.24": name and version) and
// the OCI runtime from the node's labels skew.OCIRuntimeLabel and
// skew.OCIRuntimeVersionLabel, where present (empty otherwise).
func hostFacts(node, containerRuntimeVersion string, labels map[string]string) skew.HostFacts {
	f := nodefacts.Host()
	f.Runtime, f.RuntimeVersion = skew.ParseContainerRuntimeVersion(containerRuntimeVersion)
	f.OCIRuntime = strings.TrimSpace(labels[skew.OCIRuntimeLabel])
	f.OCIRuntimeVersion = strings.TrimSpace(labels[skew.OCIRuntimeVersionLabel])
	for _, kv := range strings.Split(os.Getenv(senv.AppArmorNodes), ",") {
		if n, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && n == node {
			f.AppArmor = v == "true"
		}
	}
	return f
}

func discover(ctx context.Context) error {
	configureFramework(Env.Kubeconfig)
	cfg, err := framework.LoadConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	Env.Config = cfg
	if Env.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	sv, err := Env.Client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("asking the API server its version: %w", err)
	}
	if Env.APIServer, err = skew.ParseReleaseVersion(sv.GitVersion); err != nil {
		return err
	}
	nl, err := Env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	untestable, err := untestableNodes(nl.Items)
	if err != nil {
		return err
	}
	var all, workers []Node
	for _, n := range nl.Items {
		kv := n.Status.NodeInfo.KubeletVersion
		if l := n.Labels[nodefacts.KubeletVersionLabel]; l != "" && kv == "" {
			kv = l
		}
		v, err := skew.ParseReleaseVersion(kv)
		if err != nil {
			return fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
		}
		nd := Node{Name: n.Name, Kubelet: v, Host: hostFacts(n.Name, n.Status.NodeInfo.ContainerRuntimeVersion, n.Labels), slow: n.Labels[nodefacts.AppArmorKernelLabel] == "true",
			Untestable: untestable[n.Name], ControlPlane: nodefacts.IsControlPlane(&n)}
		all = append(all, nd)
		// Every worker, Ready or not: a node that cannot be tested is in the
		// report with its kubelet rules failed or skipped, saying why.
		if !nodefacts.IsControlPlane(&n) {
			workers = append(workers, nd)
		}
	}
	if len(workers) == 0 {
		workers = all
	}
	if only := os.Getenv(senv.Workers); only != "" {
		want := map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			want[strings.TrimSpace(n)] = true
		}
		workers = nil
		for _, n := range all {
			if want[n.Name] {
				workers = append(workers, n)
			}
		}
		if len(workers) == 0 {
			return fmt.Errorf("%s=%s names no node of the cluster", senv.Workers, only)
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].Name < workers[j].Name })
	Env.Workers = workers
	for _, w := range workers {
		if w.slow {
			// A User-Mode Linux node (one slow virtual CPU) starts a pod in
			// tens of seconds, minutes on a busy host.
			PodTimeout = slowPodTimeout
		}
	}
	Env.Own = os.Getenv(senv.OwnCluster) == "1"
	Env.Nodes = linuxNodes(nl.Items, all)
	Env.NodeAccess = nodeaccess.FromEnv(ctx, os.Getenv(senv.NodeAccess), nodeNames(Env.Nodes)...)
	Env.AgentImage, Env.AgentImageNote = os.Getenv(senv.AgentImage), os.Getenv(senv.AgentImageNote)
	Env.Keep = os.Getenv(senv.Keep) != ""
	Env.ProfilesDeleteCRDs = os.Getenv(senv.ProfilesDeleteCRDs) != ""
	Env.ScaleNodes, err = positive(senv.ScaleNodes, os.Getenv(senv.ScaleNodes), defaultScaleNodes)
	return err
}

// linuxNodes are the nodes of all (made from items, in the same order)
// whose items are Linux nodes, sorted by name.
func linuxNodes(items []corev1.Node, all []Node) []Node {
	var out []Node
	for i := range items {
		if items[i].Labels[corev1.LabelOSStable] == "linux" {
			out = append(out, all[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// nodeNames are the names of nodes.
func nodeNames(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// positive is the value of the environment variable name, a positive
// number, or def when value is empty.
func positive(name, value string, def int) (int, error) {
	if value == "" {
		return def, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive number", name, value)
	}
	return n, nil
}

// untestableNodes are the nodes whose kubelet rules cannot run, with why:
// as the runner found them (SKEWPROOF_UNTESTABLE_NODES), else every node
// whose Ready condition is not True.
func untestableNodes(nodes []corev1.Node) (map[string]string, error) {
	out := map[string]string{}
	if v, ok := os.LookupEnv(senv.UntestableNodes); ok {
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, fmt.Errorf("%s: %w", senv.UntestableNodes, err)
		}
		return out, nil
	}
	for i := range nodes {
		if why := nodefacts.NotReady(&nodes[i]); why != "" {
			out[nodes[i].Name] = why
		}
	}
	return out, nil
}

// DryRun says whether specs are only being listed: with --ginkgo.dry-run,
// and while framework.AfterReadingAllFlags previews the tree (suite nodes
// run in neither).
func DryRun() bool {
	cfg, _ := GinkgoConfiguration()
	return cfg.DryRun
}

// Connected says whether the suite talks to a real cluster (not a dry run,
// not a made-up cluster).
func Connected() bool { return !DryRun() && Env.Client != nil }
