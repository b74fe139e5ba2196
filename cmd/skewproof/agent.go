package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skewproof/skewproof/profiles"
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
	resync := fs.Duration("resync", 10*time.Second, "informer resync period (failed installs are retried, deleted profiles swept)")
	loadAppArmor := fs.Bool("apparmor-load", true, "load AppArmorProfiles with apparmor_parser where the node has AppArmor (false: the agent has not the privileges; such nodes report Failed)")
	staticPodDir := fs.String("static-pod-dir", "", "the node's static pod directory as mounted in the agent (empty: StaticPods of this node fail)")
	staticPodPath := fs.String("static-pod-path", agent.DefaultStaticPodPath, "that directory's path on the node (the kubelet's staticPodPath), for the status")
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
		Resync: *resync, Logf: logger.Printf, NoAppArmorLoad: !*loadAppArmor, StaticPodDir: *staticPodDir, StaticPodPath: *staticPodPath})
	if err != nil {
		return usagef("%v", err)
	}
	if ok, why := agent.AppArmorEnabled(agent.DefaultAppArmorEnabledFile); !ok {
		logger.Printf("node %s: AppArmor profiles will be reported Unsupported: %s", *node, why)
	} else if !*loadAppArmor {
		logger.Printf("node %s: AppArmor is enabled, but this agent may not load profiles (--apparmor-load=false)", *node)
	} else if p, err := exec.LookPath("apparmor_parser"); err != nil {
		logger.Printf("node %s: AppArmor is enabled, but the agent image has no apparmor_parser: AppArmor profiles will fail", *node)
	} else {
		logger.Printf("node %s: AppArmor is enabled; loading AppArmor profiles with %s", *node, p)
	}
	logger.Printf("node %s: keeping the profiles of namespace %s under %s", *node, *ns, a.Dir())
	if *staticPodDir != "" {
		logger.Printf("node %s: writing the StaticPods of namespace %s into %s", *node, *ns, *staticPodPath)
	}
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
	interval := fs.Duration("interval", 10*time.Second, "informer resync period (every profile reconciled at least that often)")
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
	// The expected nodes come from an informer on the Linux nodes (the agent
	// DaemonSet tolerates every taint: every Linux node is expected).
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(core, *interval,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "kubernetes.io/os=linux" }))
	nodes := nodeFactory.Core().V1().Nodes()
	c := &status.Controller{
		Dyn: dyn, Namespace: *ns, Interval: *interval, Logf: logger.Printf,
		Nodes: func(ctx context.Context) ([]string, error) {
			l, err := nodes.Lister().List(labels.Everything())
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(l))
			for _, n := range l {
				out = append(out, n.Name)
			}
			sort.Strings(out)
			return out, nil
		},
	}
	// A node added or removed changes every profile's expected set.
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.EnqueueAll() },
		DeleteFunc: func(any) { c.EnqueueAll() },
	}); err != nil {
		return err
	}
	nodeFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodes.Informer().HasSynced) {
		return fmt.Errorf("listing the nodes: %w", ctx.Err())
	}
	logger.Printf("aggregating the profiles of namespace %s", *ns)
	err = c.Run(ctx)
	nodeFactory.Shutdown()
	return err
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

// agentImageFromSelf builds the node agent image from this (static) binary
// with build (profiles.LoadAgentImage or SaveAgentImage) and warns when the
// image has no apparmor_parser.
func agentImageFromSelf(build func(bin string) (profiles.AgentImage, error)) (profiles.AgentImage, error) {
	bin, err := os.Executable()
	if err != nil {
		return profiles.AgentImage{}, err
	}
	img, err := build(bin)
	if err != nil {
		return img, fmt.Errorf("%w (the skewproof binary must be static: build it with 'make build')", err)
	}
	if img.Note != "" {
		fmt.Fprintf(os.Stderr, "warning: %s; nodes with AppArmor will report Failed for AppArmorProfiles\n", img.Note)
	}
	return img, nil
}
