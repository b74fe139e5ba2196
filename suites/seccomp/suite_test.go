package seccomp

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/hashicorp/go-version"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// node is one worker the kubelet rules run on.
type node struct {
	Name    string
	Kubelet *version.Version
	Host    skew.HostFacts
}

// env is the cluster under test, discovered before the spec tree is built
// (kubelet specs are generated per worker).
var env struct {
	Kubeconfig string
	Cluster    string
	Config     *rest.Config
	Client     kubernetes.Interface
	APIServer  *version.Version
	Workers    []node
	// NodeAccess says whether node files can be changed ("docker") or not.
	NodeAccess string
}

func TestSeccomp(t *testing.T) {
	env.Kubeconfig = os.Getenv("SKEWPROOF_KUBECONFIG")
	env.Cluster = os.Getenv("SKEWPROOF_CLUSTER")
	switch {
	case os.Getenv("SKEWPROOF_NODES") != "":
		if err := fakeEnv(os.Getenv("SKEWPROOF_APISERVER"), os.Getenv("SKEWPROOF_NODES")); err != nil {
			t.Fatal(err)
		}
	case env.Kubeconfig == "":
		t.Skip("SKEWPROOF_KUBECONFIG is not set: the seccomp suite needs a cluster (see 'skewproof run')")
	default:
		if err := discover(context.Background()); err != nil {
			t.Fatalf("discovering the cluster of %s: %v", env.Kubeconfig, err)
		}
	}
	if env.Cluster == "" {
		env.Cluster = "cluster"
	}
	// Builds the spec tree (framework.AfterReadingAllFlags previews it to
	// validate the spec texts), so the workers must be known by now.
	framework.AfterReadingAllFlags(&framework.TestContext)
	RegisterFailHandler(Fail)
	RunSpecs(t, "skewproof seccomp")
}

// configureFramework sets up k8s.io/kubernetes/test/e2e/framework for this
// suite. Its command-line flags are registered on a flag set of their own,
// never on the suite binary's: the runner's interface stays the
// SKEWPROOF_* environment and the -ginkgo.* flags, and the framework gets
// its defaults, overridden below where the suite needs something else.
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
	// deleteLeftovers find it.
	tc.DeleteNamespace = true
	tc.DeleteNamespaceOnFailure = true
	tc.VerifyServiceAccount = true
	tc.CreateTestingNS = createTestingNS
}

func cleanVersion(s string) (*version.Version, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	return skew.ParseVersion(s)
}

func fakeEnv(apiserver, nodes string) error {
	var err error
	if apiserver == "" {
		apiserver = "1.37.2"
	}
	if env.APIServer, err = cleanVersion(apiserver); err != nil {
		return err
	}
	for _, f := range strings.Split(nodes, ",") {
		name, ver, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return fmt.Errorf("SKEWPROOF_NODES: want name=version, got %q", f)
		}
		v, err := cleanVersion(ver)
		if err != nil {
			return err
		}
		env.Workers = append(env.Workers, node{Name: name, Kubelet: v, Host: hostFacts("containerd")})
	}
	env.NodeAccess = "none"
	// No API server: the specs are listed (--ginkgo.dry-run), or run and
	// fail in the framework's set-up, which finds no kubeconfig. The host
	// keeps the framework from looking for an in-cluster configuration
	// while it reads its settings; nothing ever connects to it.
	configureFramework("")
	framework.TestContext.Host = "https://dry-run.invalid"
	return nil
}

func hostFacts(runtime string) skew.HostFacts {
	h := clusters.DetectHost()
	return skew.HostFacts{Seccomp: h.Seccomp, AppArmor: h.AppArmor, Runtime: runtime}
}

func discover(ctx context.Context) error {
	configureFramework(env.Kubeconfig)
	cfg, err := framework.LoadConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	env.Config = cfg
	if env.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	sv, err := env.Client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("asking the API server its version: %w", err)
	}
	if env.APIServer, err = cleanVersion(sv.GitVersion); err != nil {
		return err
	}
	nl, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	var all, workers []node
	for _, n := range nl.Items {
		kv := n.Status.NodeInfo.KubeletVersion
		if l := n.Labels[clusters.KubeletVersionLabel]; l != "" && kv == "" {
			kv = l
		}
		v, err := cleanVersion(kv)
		if err != nil {
			return fmt.Errorf("node %s: kubelet version: %w", n.Name, err)
		}
		rt, _, _ := strings.Cut(n.Status.NodeInfo.ContainerRuntimeVersion, "://")
		nd := node{Name: n.Name, Kubelet: v, Host: hostFacts(rt)}
		all = append(all, nd)
		if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp && schedulable(n) {
			workers = append(workers, nd)
		}
	}
	if len(workers) == 0 {
		workers = all
	}
	if only := os.Getenv("SKEWPROOF_WORKERS"); only != "" {
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
			return fmt.Errorf("SKEWPROOF_WORKERS=%s names no node of the cluster", only)
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].Name < workers[j].Name })
	env.Workers = workers
	env.NodeAccess = os.Getenv("SKEWPROOF_NODE_ACCESS")
	if env.NodeAccess == "" {
		env.NodeAccess = "none"
		if _, err := clusters.Docker(ctx, "inspect", "--type", "container", "--format", "{{.Name}}", workers[0].Name); err == nil {
			env.NodeAccess = "docker"
		}
	}
	return nil
}

func schedulable(n corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	if dryRun() || env.Client == nil {
		return nil
	}
	Expect(ensureRuntimeClass(ctx)).To(Succeed())
	// The profiles come from the node agent of the fixtures namespace
	// ('skewproof run' deploys it and installs them before the suite).
	c, err := profiles.NewCluster(env.Config, profiles.FixturesNamespace)
	Expect(err).NotTo(HaveOccurred())
	Expect(profiles.CheckFixtures(ctx, c)).To(Succeed())
	return nil
}, func([]byte) {})

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	if dryRun() || env.Client == nil {
		return
	}
	deleteLeftovers(ctx)
})

// reportProgress prints one machine-readable line per finished spec; the
// runner turns them into live progress. setUp registers it in every
// top-level Describe: a top-level ReportAfterEach would not survive the
// preview of the spec tree that framework.AfterReadingAllFlags makes
// (Ginkgo runs the suite from a copy that holds only containers and suite
// nodes).
func reportProgress(r SpecReport) {
	if dryRun() {
		return
	}
	if res, ok := reports.FromSpec(r); ok {
		fmt.Fprintln(os.Stdout, reports.FormatProgress(res))
	}
}

// dryRun says whether specs are only being listed: with --ginkgo.dry-run,
// and while framework.AfterReadingAllFlags previews the tree (suite nodes
// run in neither).
func dryRun() bool {
	cfg, _ := GinkgoConfiguration()
	return cfg.DryRun
}

var _ = ReportAfterSuite("skewproof JUnit", func(r Report) {
	path := os.Getenv("SKEWPROOF_JUNIT")
	if path == "" || r.SuiteConfig.DryRun {
		return
	}
	s := reports.FromGinkgo(r, "seccomp", env.Cluster)
	Expect(reports.WriteJUnitFile(path, s)).To(Succeed())
})

// specLabels are the labels of every spec (DESIGN.md conventions): the
// family, its level, the catalogue id ('/' is not allowed in Ginkgo labels,
// so "seccomp/kubelet/enforce" becomes "seccomp-kubelet-enforce") and, for
// kubelet rules, the node.
func specLabels(id string, nd *node, extra ...string) Labels {
	parts := strings.Split(id, "/")
	l := Labels{"seccomp", "LinuxOnly", strings.ReplaceAll(id, "/", "-")}
	if len(parts) > 1 {
		if strings.HasPrefix(parts[len(parts)-1], "row-") {
			l = append(l, "failure-"+parts[len(parts)-1])
		} else {
			l = append(l, parts[1])
		}
	}
	if smoke[id] {
		l = append(l, "smoke")
	}
	if nd != nil {
		l = append(l, "kubelet", "node:"+nd.Name)
	} else {
		l = append(l, "api")
	}
	return append(l, extra...)
}

// smoke is a quick subset (label "smoke") for integration tests: one API
// rule with warnings, the kubelet's enforcement and a localhost profile.
var smoke = map[string]bool{
	"seccomp/api/types":         true,
	"seccomp/create/warning":    true,
	"seccomp/kubelet/enforce":   true,
	"seccomp/kubelet/localhost": true,
}

// specText is "[id] title [LinuxOnly]" plus the node for kubelet rules.
func specText(id, what string, nd *node) string {
	s := fmt.Sprintf("[%s] %s [LinuxOnly]", id, what)
	if nd != nil {
		s += fmt.Sprintf(" [node:%s kubelet:v%s]", nd.Name, nd.Kubelet)
	}
	return s
}

// ruleIDs maps the label of every declared catalogue id back to the id
// (prepare finds a spec's id from its labels).
var ruleIDs = map[string]string{}

// declared checks a catalogue id and returns the scope of the Describe
// being built.
func declared(id string) (skew.Rule, *scope) {
	r, ok := skew.RuleByID(id)
	if !ok {
		panic("unknown catalogue id " + id)
	}
	if declaring == nil {
		panic("spec " + id + " declared outside a Describe that called setUp")
	}
	ruleIDs[strings.ReplaceAll(id, "/", "-")] = id
	return r, declaring
}

// apiRule declares a spec for an API server rule (once per cluster).
func apiRule(id string, body func(ctx context.Context, t *scenario), decorators ...any) bool {
	r, s := declared(id)
	args := append([]any{specLabels(id, nil)}, decorators...)
	args = append(args, func(ctx SpecContext) { s.run(ctx, body) })
	It(specText(id, r.Title, nil), args...)
	return true
}

// kubeletRule declares one spec per worker node for a kubelet rule.
func kubeletRule(id string, body func(ctx context.Context, t *scenario), decorators ...any) bool {
	r, s := declared(id)
	for i := range env.Workers {
		nd := env.Workers[i]
		args := append([]any{specLabels(id, &nd)}, decorators...)
		args = append(args, func(ctx SpecContext) { s.run(ctx, body) })
		It(specText(id, r.Title, &nd), args...)
	}
	return true
}
