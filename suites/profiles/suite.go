package profiles

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// Namespace of the suite's agent, profiles and node statuses.
const Namespace = "skewproof-profiles-e2e"

// env is what the suite's specs share, set up before the first of them
// (setUp) from the harness's view of the cluster (h.Env).
var env struct {
	// Cluster is the cluster under test with the suite's namespace.
	Cluster *profiles.Cluster
	// Nodes are the nodes the suite's profiles are judged on: every Linux
	// node, control plane included, but the untestable ones.
	Nodes []h.Node
	// Excluded are the untestable nodes (h.Node.Untestable, as the runner
	// found them): they get no agent, and the run reports them itself.
	Excluded []string
}

// family is the catalogue family of this suite and its first spec label.
const family = "profiles"

func init() {
	h.Register(h.Suite{Family: family, SetUp: setUp, Permissions: permissions()})
}

func nodeNames() []string {
	var out []string
	for _, n := range env.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// setUp runs before the suite's first spec: it connects to the cluster and
// picks the nodes. The agent is deployed by the first spec that needs it
// (withAgent), so that a process that runs only the scale bench, which
// writes node statuses itself, deploys none. The cleanup removes the agent
// when one was deployed.
func setUp(ctx context.Context) (func(context.Context) error, error) {
	c, err := profiles.NewCluster(h.Env.Config, Namespace)
	if err != nil {
		return nil, err
	}
	env.Cluster = c
	for _, n := range h.Env.Nodes {
		if n.Untestable != "" {
			env.Excluded = append(env.Excluded, n.Name)
			GinkgoWriter.Printf("left out: %s\n", n.Untestable)
			continue
		}
		env.Nodes = append(env.Nodes, n)
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
// agent: before the first of them it deploys the agent and the aggregator
// into the suite's namespace, from the agent image the runner loaded into
// the nodes; an error fails every spec that needs the agent. The cleanup
// of setUp removes them (the CRDs stay unless
// SKEWPROOF_PROFILES_DELETE_CRDS is set: deleting and re-creating CRDs
// makes the garbage collector rebuild its monitors, which stalls it for a
// while on a cluster other suites use; 'skewproof profiles teardown --crds'
// removes them).
func withAgent() {
	BeforeEach(func(ctx SpecContext) {
		if !h.Connected() {
			return // a dry run, or no cluster
		}
		agentOnce.Do(func() {
			By("deploying the node agent of the profiles suite")
			agentErr = deployAgent(ctx)
		})
		Expect(agentErr).NotTo(HaveOccurred(), "deploying the node agent of the profiles suite")
	})
}

func deployAgent(ctx context.Context) error {
	image := h.Env.AgentImage
	if image == "" {
		// The runner builds the agent image and loads it into the nodes.
		return fmt.Errorf("no agent image: run the profiles suite through 'skewproof run', which builds it and loads it into the nodes, or give it a run plan (%s) that names an agent image present on every node", senv.PlanFile)
	}
	By("deploying the agent image " + image)
	agentDeployed = true
	return env.Cluster.Deploy(ctx, agent.DeployOptions{Image: image, ExcludeNodes: env.Excluded}, h.EveryNodeWait(3*time.Minute))
}

func teardown(ctx context.Context) error {
	if err := env.Cluster.Teardown(ctx, h.Env.ProfilesDeleteCRDs); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.Cluster.Core.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
