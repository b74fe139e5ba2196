package profiles

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"

	"github.com/skewproof/skewproof/internal/nodeaccess"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/skewproof/skewproof/clusters/kubeclient"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// Namespace of the suite's agent, profiles and node statuses.
const Namespace = "skewproof-profiles-e2e"

type node struct {
	Name    string
	Kubelet string
	Worker  bool
}

var env struct {
	Kubeconfig string
	Cluster    *profiles.Cluster
	APIServer  string
	Nodes      []node
	NodeAccess nodeaccess.Access
	ScaleNodes int
	// NoParser says why the agent image has no apparmor_parser (empty: it
	// has one; the reason comes from the run plan).
	NoParser string
	// Excluded are the nodes left out (SKEWPROOF_UNTESTABLE_NODES).
	Excluded []string
}

// family is the catalogue family of this suite and its first spec label.
const family = "profiles"

func init() {
	h.Register(h.Suite{Family: family, SetUp: setUp})
}

func discover(ctx context.Context) error {
	rc, err := kubeclient.Config(env.Kubeconfig)
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
	// Nodes the runner could not test (not Ready) get no agent: the
	// suite's profiles are judged on the others, and the run reports those
	// nodes itself.
	untestable := h.Env.Plan.Untestable()
	for _, n := range nl.Items {
		if why, ok := untestable[n.Name]; ok {
			env.Excluded = append(env.Excluded, n.Name)
			GinkgoWriter.Printf("left out: %s\n", why)
			continue
		}
		cp := nodefacts.IsControlPlane(&n)
		env.Nodes = append(env.Nodes, node{Name: n.Name, Kubelet: n.Status.NodeInfo.KubeletVersion, Worker: !cp})
	}
	sort.Slice(env.Nodes, func(i, j int) bool { return env.Nodes[i].Name < env.Nodes[j].Name })
	names := make([]string, len(env.Nodes))
	for i, n := range env.Nodes {
		names[i] = n.Name
	}
	env.NodeAccess = nodeaccess.FromEnv(ctx, h.Env.Plan.NodeAccess, names...)
	return nil
}

func nodeNames() []string {
	var out []string
	for _, n := range env.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// setUp runs before the suite's first spec: it discovers the cluster. The
// agent is deployed by the first spec that needs it (withAgent), so that a
// process that runs only the scale bench, which writes node statuses
// itself, deploys none. The cleanup removes the agent when one was deployed.
func setUp(ctx context.Context) (func(context.Context) error, error) {
	env.Kubeconfig = h.Env.Kubeconfig
	env.ScaleNodes = 500
	if s := os.Getenv(senv.ScaleNodes); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want a positive number", senv.ScaleNodes, s)
		}
		env.ScaleNodes = n
	}
	if err := discover(ctx); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if !agentDeployed {
			return nil
		}
		return teardown(ctx)
	}, nil
}

var (
	agentOnce     sync.Once
	agentErr      error
	agentDeployed bool // something was applied: the cleanup tears it down
)

// withAgent comes after h.Specs in every Describe whose specs use the
// agent: before the first of them it loads the agent image into the nodes
// unless one is given, and deploys the agent and the aggregator into the
// suite's namespace; an error fails every spec that needs the agent. The
// cleanup of setUp removes them (the CRDs stay unless
// SKEWPROOF_PROFILES_DELETE_CRDS is set: deleting and re-creating CRDs
// makes the garbage collector rebuild its monitors, which stalls it for a
// while on a cluster other suites use; 'skewproof profiles teardown --crds'
// removes them).
func withAgent() {
	BeforeEach(func(ctx SpecContext) {
		if env.Cluster == nil {
			return // no cluster: the suite's set-up failed, or a dry run
		}
		agentOnce.Do(func() {
			By("deploying the node agent of the profiles suite")
			agentErr = deployAgent(ctx)
		})
		Expect(agentErr).NotTo(HaveOccurred(), "deploying the node agent of the profiles suite")
	})
}

func deployAgent(ctx context.Context) error {
	image := h.Env.Plan.AgentImage
	// Set by the runner when the image it built has no apparmor_parser.
	env.NoParser = h.Env.Plan.AgentImageNote
	if image == "" {
		// The runner builds the agent image and loads it into the nodes.
		return fmt.Errorf("no agent image: run the profiles suite through 'skewproof run', which builds it and loads it into the nodes, or give it a run plan (%s) naming an agent image present on every node", senv.PlanFile)
	}
	By("deploying the agent image " + image)
	agentDeployed = true
	return env.Cluster.Deploy(ctx, agent.DeployOptions{Image: image, ExcludeNodes: env.Excluded}, 3*time.Minute)
}

func teardown(ctx context.Context) error {
	if err := env.Cluster.Teardown(ctx, os.Getenv(senv.ProfilesDeleteCRDs) != ""); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.Cluster.Core.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// record attaches the skewproof result entry of a spec.
func record(id, node, kubelet, outcome string) {
	AddReportEntry(reports.EntryName, reports.Result{ID: id, Node: node, Kubelet: kubelet, APIServer: env.APIServer,
		Verdict: skew.Pass, Outcome: outcome}, ReportEntryVisibilityNever)
}

// onNode runs a shell command in a kind node container.
func onNode(ctx context.Context, nodeName, script string, args ...string) (string, error) {
	return nodeaccess.Exec(ctx, nodeName, append([]string{"sh", "-c", script, "sh"}, args...)...)
}

func needDocker() {
	if env.NodeAccess != nodeaccess.Docker {
		Skip("needs docker access to the node containers (the run plan's nodeAccess: docker) to look at or break node files")
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
