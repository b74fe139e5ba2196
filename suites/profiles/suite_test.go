package profiles

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/reports"
)

// Namespace of the suite's agent, profiles and node statuses.
const Namespace = "skewproof-profiles-e2e"

type node struct {
	Name    string
	Kubelet string
	Worker  bool
}

var env struct {
	Kubeconfig  string
	ClusterName string
	Cluster     *profiles.Cluster
	APIServer   string
	Nodes       []node
	NodeAccess  string
	DryRun      bool
	ScaleNodes  int
	// NoParser says why the agent image has no apparmor_parser (empty: it
	// has one; for an image from SKEWPROOF_AGENT_IMAGE the reason comes
	// from SKEWPROOF_AGENT_IMAGE_NOTE).
	NoParser string
}

func TestProfiles(t *testing.T) {
	env.Kubeconfig = os.Getenv("SKEWPROOF_KUBECONFIG")
	env.ClusterName = os.Getenv("SKEWPROOF_CLUSTER")
	if env.ClusterName == "" {
		env.ClusterName = "cluster"
	}
	env.ScaleNodes = 500
	if s := os.Getenv("SKEWPROOF_SCALE_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SKEWPROOF_SCALE_NODES=%q: want a positive number", s)
		}
		env.ScaleNodes = n
	}
	cfg, _ := GinkgoConfiguration()
	env.DryRun = cfg.DryRun
	if env.Kubeconfig == "" && !env.DryRun {
		t.Skip("SKEWPROOF_KUBECONFIG is not set: the profiles suite needs a cluster")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "skewproof profiles")
}

func discover(ctx context.Context) error {
	rc, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 50, 100
	if env.Cluster, err = profiles.NewCluster(rc, Namespace); err != nil {
		return err
	}
	sv, err := env.Cluster.Core.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("asking the API server its version: %w", err)
	}
	env.APIServer = sv.GitVersion
	nl, err := env.Cluster.Core.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/os=linux"})
	if err != nil {
		return err
	}
	for _, n := range nl.Items {
		_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
		env.Nodes = append(env.Nodes, node{Name: n.Name, Kubelet: n.Status.NodeInfo.KubeletVersion, Worker: !cp})
	}
	sort.Slice(env.Nodes, func(i, j int) bool { return env.Nodes[i].Name < env.Nodes[j].Name })
	env.NodeAccess = os.Getenv("SKEWPROOF_NODE_ACCESS")
	if env.NodeAccess == "" {
		env.NodeAccess = "none"
		if len(env.Nodes) > 0 {
			if _, err := clusters.Docker(ctx, "inspect", "--type", "container", "--format", "{{.Name}}", env.Nodes[0].Name); err == nil {
				env.NodeAccess = "docker"
			}
		}
	}
	return nil
}

func nodeNames() []string {
	var out []string
	for _, n := range env.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// agentBinary returns a static skewproof binary for the agent image.
func agentBinary(ctx context.Context) (string, error) {
	if b := os.Getenv("SKEWPROOF_BINARY"); b != "" {
		return b, nil
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("skewproof-agent-%d", os.Getpid()))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/skewproof")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the agent binary: %v: %s", err, b)
	}
	return bin, nil
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	if env.DryRun {
		return nil
	}
	Expect(discover(ctx)).To(Succeed())
	image := os.Getenv("SKEWPROOF_AGENT_IMAGE")
	// Set by the runner when the image it built has no apparmor_parser.
	env.NoParser = os.Getenv("SKEWPROOF_AGENT_IMAGE_NOTE")
	if image == "" {
		Expect(env.NodeAccess).To(Equal("docker"), "without docker access to the nodes, set SKEWPROOF_AGENT_IMAGE to an agent image present on every node")
		bin, err := agentBinary(ctx)
		Expect(err).NotTo(HaveOccurred())
		if os.Getenv("SKEWPROOF_BINARY") == "" {
			DeferCleanup(os.Remove, bin)
		}
		img, err := profiles.LoadAgentImage(ctx, bin, nodeNames())
		Expect(err).NotTo(HaveOccurred())
		image = img.Ref
		if img.Note != "" {
			GinkgoWriter.Printf("warning: %s\n", img.Note)
			env.NoParser = img.Note
		} else {
			By("the agent image holds apparmor_parser from " + img.AppArmorParser)
		}
	}
	By("deploying the agent image " + image)
	Expect(env.Cluster.Deploy(ctx, agent.DeployOptions{Image: image}, 3*time.Minute)).To(Succeed())
	return []byte(env.NoParser)
}, func(ctx SpecContext, noParser []byte) {
	if env.DryRun || env.Cluster != nil {
		return
	}
	env.NoParser = string(noParser)
	Expect(discover(ctx)).To(Succeed())
}, NodeTimeout(6*time.Minute))

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	if env.DryRun || env.Cluster == nil || os.Getenv("SKEWPROOF_KEEP") != "" {
		return
	}
	// The CRDs stay unless asked: deleting and re-creating CRDs makes the
	// garbage collector rebuild its monitors, which stalls it for a while
	// on a cluster other suites use. 'skewproof profiles teardown --crds'
	// removes them.
	Expect(env.Cluster.Teardown(ctx, os.Getenv("SKEWPROOF_PROFILES_DELETE_CRDS") != "")).To(Succeed())
	Eventually(func(ctx context.Context) bool {
		_, err := env.Cluster.Core.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
		return err != nil
	}).WithContext(ctx).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeTrue(), "namespace %s is still there", Namespace)
}, NodeTimeout(3*time.Minute))

var _ = ReportAfterEach(func(r SpecReport) {
	if env.DryRun {
		return
	}
	if res, ok := reports.FromSpec(r); ok {
		fmt.Fprintln(os.Stdout, reports.FormatProgress(res))
	}
})

var _ = ReportAfterSuite("skewproof JUnit", func(r Report) {
	path := os.Getenv("SKEWPROOF_JUNIT")
	if path == "" || env.DryRun {
		return
	}
	Expect(reports.WriteJUnitFile(path, reports.FromGinkgo(r, "profiles", env.ClusterName))).To(Succeed())
})

// record attaches the skewproof result entry of a spec.
func record(id, node, kubelet, outcome string) {
	AddReportEntry(reports.EntryName, reports.Result{ID: id, Node: node, Kubelet: kubelet, APIServer: env.APIServer,
		Verdict: reports.Pass, Outcome: outcome}, ReportEntryVisibilityNever)
}

// onNode runs a shell command in a kind node container.
func onNode(ctx context.Context, nodeName, script string, args ...string) (string, error) {
	return clusters.Docker(ctx, append([]string{"exec", nodeName, "sh", "-c", script, "sh"}, args...)...)
}

func needDocker() {
	if env.NodeAccess != "docker" {
		Skip("needs docker access to the node containers (SKEWPROOF_NODE_ACCESS=docker) to look at or break node files")
	}
}

// execIn runs a command in a container of a pod of the suite's namespace
// through the API server (pods/exec), and returns its output.
func execIn(ctx context.Context, pod, container string, cmd ...string) (string, string, error) {
	req := env.Cluster.Core.CoreV1().RESTClient().Post().Resource("pods").Namespace(Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(env.Cluster.Config, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}
