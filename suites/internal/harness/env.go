// Package harness is what the conformance suites (suites/seccomp,
// suites/apparmor) share: discovering the cluster under test, configuring
// k8s.io/kubernetes/test/e2e/framework, declaring one spec per catalogue id
// (API server rules once, kubelet rules once per worker), asking the oracle
// what each spec must show, acting on the cluster, observing, and recording
// a verdict per spec for the JUnit report.
//
// It holds no expectation of its own: those come from package skew.
package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/hashicorp/go-version"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// Node is one worker the kubelet rules run on.
type Node struct {
	Name    string
	Kubelet *version.Version
	Host    skew.HostFacts
	slow    bool // a User-Mode Linux node (nodefacts.AppArmorKernelLabel)
	// Untestable says why the node's kubelet rules cannot run (not Ready;
	// cordoned on an own cluster); they are reported fail on an own
	// cluster, skip elsewhere. Empty: testable.
	Untestable string
}

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
}

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
		p.Nodes = append(p.Nodes, senv.PlanNode{Name: name, Kubelet: ver, Host: host, HostFrom: senv.HostFromLocal})
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
	if p.Nodes, err = senv.NodesOf(nl.Items, nodefacts.Host(), senv.HostFromLocal, nil); err != nil {
		return p, err
	}
	p.NodeAccess = string(nodeaccess.Probe(ctx, p.NodeNames()...))
	return p, nil
}

// usePlan sets Env from the plan: the API server, the workers the kubelet
// rules run on (SKEWPROOF_WORKERS narrows them), and, with a kubeconfig,
// the framework and the clients.
func usePlan(p senv.Plan, kubeconfig string) error {
	var err error
	Env.Plan, Env.Cluster, Env.Kubeconfig, Env.Own = p, p.Cluster, kubeconfig, p.Own
	if Env.Cluster == "" {
		Env.Cluster = "cluster"
	}
	if Env.APIServer, err = skew.ParseReleaseVersion(p.APIServer); err != nil {
		return fmt.Errorf("the API server's version: %w", err)
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
		v, err := skew.ParseReleaseVersion(n.Kubelet)
		if err != nil {
			return fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
		}
		Env.Workers = append(Env.Workers, Node{Name: n.Name, Kubelet: v, Host: n.Host, slow: n.AppArmorKernel, Untestable: n.Untestable})
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
