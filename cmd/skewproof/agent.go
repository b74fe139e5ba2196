package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/status"
)

// The node agent and the aggregator run from the skewproof binary itself,
// in the image that 'skewproof run' builds from it (profiles.LoadAgentImage).
func init() {
	register(command{name: "agent", summary: "node agent: put profiles on this node, report its status (runs in a DaemonSet)", run: runAgent})
	register(command{name: "agent aggregate", summary: "keep each profile's aggregated status (runs in a Deployment)", run: runAggregate})
	register(command{name: "agent probe", summary: "readiness probe of the node agent", run: runAgentProbe})
}

// restConfig is the in-cluster configuration, or a kubeconfig when given.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("not in a pod (%v): pass --kubeconfig", err)
	}
	return cfg, nil
}

func runAgent(ctx context.Context, args []string) error {
	fs := newFlagSet("agent")
	node := fs.String("node", os.Getenv("NODE_NAME"), "this node's name (downward API spec.nodeName)")
	ns := fs.String("namespace", agent.DefaultNamespace, "namespace of the profiles and node statuses")
	root := fs.String("seccomp-root", agent.SeccompMount, "the kubelet's seccomp root as mounted in the agent")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig (default: in-cluster)")
	resync := fs.Duration("resync", 10*time.Second, "period of full passes (failed installs are retried)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "skewproof-agent/" + *node
	dyn, core, err := clientsFor(cfg)
	if err != nil {
		return err
	}
	os.Remove(agent.ReadyFile)
	logger := log.New(os.Stderr, "", log.LstdFlags)
	a, err := agent.New(agent.Config{Node: *node, Namespace: *ns, SeccompRoot: *root, Dynamic: dyn, Core: core,
		Resync: *resync, Logf: logger.Printf})
	if err != nil {
		return usagef("%v", err)
	}
	if ok, why := agent.AppArmorEnabled(agent.DefaultAppArmorEnabledFile); !ok {
		logger.Printf("node %s: AppArmor profiles will be reported Unsupported: %s", *node, why)
	}
	logger.Printf("node %s: keeping the profiles of namespace %s under %s", *node, *ns, a.Dir())
	return a.Run(ctx, func() {
		if err := os.WriteFile(agent.ReadyFile, []byte("ok\n"), 0o644); err != nil {
			logger.Printf("writing %s: %v", agent.ReadyFile, err)
		}
	})
}

func runAgentProbe(ctx context.Context, args []string) error {
	if _, err := os.Stat(agent.ReadyFile); err != nil {
		return fmt.Errorf("not ready: no first sync yet")
	}
	return nil
}

func runAggregate(ctx context.Context, args []string) error {
	fs := newFlagSet("agent aggregate")
	ns := fs.String("namespace", agent.DefaultNamespace, "namespace of the profiles and node statuses")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig (default: in-cluster)")
	interval := fs.Duration("interval", 10*time.Second, "period of full passes besides watch events")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "skewproof-aggregator"
	dyn, core, err := clientsFor(cfg)
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)
	c := &status.Controller{
		Dyn: dyn, Namespace: *ns, Interval: *interval, Logf: logger.Printf,
		// The agent DaemonSet tolerates every taint: every Linux node is expected.
		Nodes: func(ctx context.Context) ([]string, error) {
			l, err := core.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/os=linux"})
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(l.Items))
			for _, n := range l.Items {
				out = append(out, n.Name)
			}
			sort.Strings(out)
			return out, nil
		},
	}
	logger.Printf("aggregating the profiles of namespace %s", *ns)
	return c.Run(ctx)
}

// clientsFor returns the dynamic and typed clients of one configuration.
func clientsFor(cfg *rest.Config) (dynamic.Interface, kubernetes.Interface, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return dyn, core, nil
}
