// Package harness is what the suites (suites/seccomp, suites/apparmor,
// suites/profiles) share: the cluster under test from the run plan and the
// suite process's settings (Env: a suite package reads neither the
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
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"
	. "github.com/onsi/ginkgo/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
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
	// Access is how this node's files are reached from this host (the
	// plan's PlanNode.Access): NodeShell needs nodeaccess.Docker.
	Access nodeaccess.Access
}

// AppArmorKernel says whether the node is the User-Mode Linux node
// skewproof made to enforce AppArmor (nodefacts.AppArmorKernelLabel).
func (n Node) AppArmorKernel() bool { return n.slow }

// Env is the cluster under test, from the run plan, known before the spec
// tree is built (kubelet specs are generated per worker).
var Env struct {
	// Plan is the run plan (suites/env.Plan): the runner's, or made by
	// this process when it runs by hand, or made up for a dry run.
	Plan       senv.Plan
	Kubeconfig string
	Cluster    string
	Config     *rest.Config
	Client     kubernetes.Interface
	APIServer  *version.Version
	Workers    []Node
	// Own says whether skewproof brought this cluster up itself
	// (Plan.Own): what it set up there must be there, so a missing part
	// fails a spec instead of skipping it (SetUpMissing).
	Own bool
	// Nodes is every Linux node (kubernetes.io/os=linux), control plane
	// included, testable or not, sorted by name; unlike Workers, whatever
	// SKEWPROOF_WORKERS says.
	Nodes []Node
	// AgentImage is the node agent image present on every node (empty:
	// none given); AgentImageNote says why it has no apparmor_parser
	// (empty: it has one).
	AgentImage, AgentImageNote string
	// Keep: leave what the suites created: no suite's cleanup runs.
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

// fakeEnv is a made-up cluster (SKEWPROOF_NODES, SKEWPROOF_APISERVER), to
// list the specs without one.
func fakeEnv(apiserver, nodes string) error {
	if apiserver == "" {
		apiserver = "1.37.2"
	}
	p := senv.Plan{Cluster: "cluster", APIServer: apiserver, RunID: rand.String(6)}
	for _, f := range strings.Split(nodes, ",") {
		name, ver, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return fmt.Errorf("%s: want name=version, got %q", senv.Nodes, f)
		}
		host := nodefacts.Host()
		host.Runtime = "containerd"
		p.Nodes = append(p.Nodes, senv.PlanNode{Name: name, OS: "linux", Kubelet: ver, Host: host, HostFrom: senv.HostFromLocal, Access: string(nodeaccess.None)})
	}
	if err := usePlan(p, ""); err != nil {
		return err
	}
	// No API server: the specs are listed (--ginkgo.dry-run), or run and
	// fail in the framework's set-up, which finds no kubeconfig. The host
	// keeps the framework from looking for an in-cluster configuration
	// while it reads its settings; nothing ever connects to it.
	configureFramework("")
	framework.TestContext.Host = "https://dry-run.invalid"
	return nil
}

// planByHand is the plan of a suite process run by hand on a cluster
// (SKEWPROOF_KUBECONFIG, no SKEWPROOF_PLAN): the runner's discovery, with
// this host's kernel facts for every node and no agent image.
func planByHand(ctx context.Context, kubeconfig string) (senv.Plan, error) {
	p := senv.Plan{Cluster: "cluster", Kubeconfig: kubeconfig, RunID: rand.String(6)}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return p, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return p, err
	}
	sv, err := cs.Discovery().ServerVersion()
	if err != nil {
		return p, fmt.Errorf("asking the API server its version: %w", err)
	}
	p.APIServer = sv.GitVersion
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return p, fmt.Errorf("listing nodes: %w", err)
	}
	if p.Nodes, err = senv.NodesOf(nl.Items, nodefacts.Host(), senv.HostFromLocal); err != nil {
		return p, err
	}
	p.SetAccess(nodeaccess.Probe(ctx, p.NodeNames()...))
	return p, nil
}

// usePlan sets Env from the plan: the API server, the workers the kubelet
// rules run on (SKEWPROOF_WORKERS narrows them), and, with a kubeconfig,
// the framework and the clients.
func usePlan(p senv.Plan, kubeconfig string) error {
	var err error
	Env.Plan, Env.Cluster, Env.Kubeconfig, Env.Own, Env.Keep = p, p.Cluster, kubeconfig, p.Own, p.Keep
	if Env.Cluster == "" {
		Env.Cluster = "cluster"
	}
	Env.AgentImage, Env.AgentImageNote = p.AgentImage, p.AgentImageNote
	Env.ProfilesDeleteCRDs = os.Getenv(senv.ProfilesDeleteCRDs) != ""
	if Env.ScaleNodes, err = positive(senv.ScaleNodes, os.Getenv(senv.ScaleNodes), defaultScaleNodes); err != nil {
		return err
	}
	if Env.APIServer, err = release.ParseReleaseVersion(p.APIServer); err != nil {
		return fmt.Errorf("the API server's version: %w", err)
	}
	Env.Nodes = nil
	for _, n := range p.Nodes {
		if n.OS == "linux" {
			nd, err := nodeOf(n)
			if err != nil {
				return err
			}
			Env.Nodes = append(Env.Nodes, nd)
		}
	}
	workers := p.Workers()
	if only := os.Getenv(senv.Workers); only != "" {
		want := map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			want[strings.TrimSpace(n)] = true
		}
		workers = nil
		for _, n := range p.Nodes {
			if want[n.Name] {
				workers = append(workers, n)
			}
		}
		if len(workers) == 0 {
			return fmt.Errorf("%s=%s names no node of the cluster", senv.Workers, only)
		}
	}
	Env.Workers = nil
	for _, n := range workers {
		nd, err := nodeOf(n)
		if err != nil {
			return err
		}
		Env.Workers = append(Env.Workers, nd)
		if n.AppArmorKernel {
			// A User-Mode Linux node (one slow virtual CPU) starts a pod in
			// tens of seconds, minutes on a busy host.
			PodTimeout = slowPodTimeout
		}
	}
	sort.Slice(Env.Workers, func(i, j int) bool { return Env.Workers[i].Name < Env.Workers[j].Name })
	if kubeconfig == "" {
		return nil
	}
	configureFramework(kubeconfig)
	cfg, err := framework.LoadConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	Env.Config = cfg
	Env.Client, err = kubernetes.NewForConfig(cfg)
	return err
}

// nodeOf is the harness's view of a node of the plan.
func nodeOf(n senv.PlanNode) (Node, error) {
	v, err := release.ParseReleaseVersion(n.Kubelet)
	if err != nil {
		return Node{}, fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
	}
	return Node{Name: n.Name, Kubelet: v, Host: n.Host, slow: n.AppArmorKernel, Untestable: n.Untestable, ControlPlane: n.ControlPlane,
		Access: nodeaccess.Access(n.Access)}, nil
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
