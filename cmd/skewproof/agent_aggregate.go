package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/status"
)

func newAgentAggregateCmd() *cobra.Command {
	var ns, kubeconfig string
	var interval time.Duration
	var exclude []string
	c := &cobra.Command{
		Use:   "aggregate",
		Short: "keep each profile's aggregated status (runs in a Deployment)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAggregate(cmd.Context(), ns, kubeconfig, interval, exclude)
		},
	}
	c.Flags().StringVar(&ns, "namespace", agent.DefaultNamespace, "namespace of the profiles and node statuses")
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	c.Flags().DurationVar(&interval, "interval", 10*time.Second, "informer resync period (every profile reconciled at least that often)")
	c.Flags().StringSliceVar(&exclude, "exclude-nodes", nil, "nodes not expected to report (the agent does not run there: nodes a run cannot test)")
	return c
}

// runAggregate runs the status aggregator, with the Linux nodes from an
// informer as the nodes expected to report.
func runAggregate(ctx context.Context, ns, kubeconfig string, interval time.Duration, exclude []string) error {
	cfg, err := kubeclient.Config(kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "skewproof-aggregator"
	cl, err := kubeclient.New(cfg)
	if err != nil {
		return err
	}
	dyn, core := cl.Dynamic, cl.Core
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// The expected nodes come from an informer on the Linux nodes (the agent
	// DaemonSet tolerates every taint: every Linux node is expected), but
	// those the agent was kept off (--exclude-nodes).
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(core, interval,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "kubernetes.io/os=linux" }))
	nodes := nodeFactory.Core().V1().Nodes()
	c := &status.Controller{
		Dyn: dyn, Namespace: ns, Interval: interval, Log: logger,
		Nodes: func(ctx context.Context) ([]string, error) {
			l, err := nodes.Lister().List(labels.Everything())
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(l))
			for _, n := range l {
				if !slices.Contains(exclude, n.Name) {
					out = append(out, n.Name)
				}
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
	logger.Info("aggregating the profiles of a namespace", "namespace", ns)
	err = c.Run(ctx)
	nodeFactory.Shutdown()
	return err
}
