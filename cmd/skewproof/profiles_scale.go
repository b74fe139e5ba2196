package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/status"
)

func newProfilesScaleCmd() *cobra.Command {
	var o scaleOptions
	c := &cobra.Command{
		Use:   "scale",
		Short: "scale benchmark of per-node profile status objects against a real API server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var flags []string
			cmd.Flags().Visit(func(f *pflag.Flag) { flags = append(flags, "--"+f.Name+" "+f.Value.String()) })
			return o.run(cmd.Context(), flags)
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster whose API server is measured (required)")
	fs.IntVar(&o.nodes, "nodes", 5000, "simulated nodes (names only: no Node objects are created)")
	fs.IntVar(&o.nprof, "profiles", 3, "profiles")
	fs.IntVar(&o.workers, "workers", 4, "concurrent writers")
	fs.Float64Var(&o.qps, "qps", 100, "client-side limit of requests per second")
	fs.StringVar(&o.ns, "namespace", "", "namespace to create and delete (default skewproof-scale-<random>)")
	fs.StringVar(&o.out, "out", "", "also write the Markdown table to this file")
	fs.DurationVar(&o.gcTimeout, "gc-timeout", 15*time.Minute, "how long to wait for the garbage collector to remove the node statuses")
	fs.BoolVar(&o.sizesOnly, "single-object-only", false, "only size the single-object alternative for --nodes (no cluster needed)")
	return c
}

type scaleOptions struct {
	kubeconfig, ns, out   string
	nodes, nprof, workers int
	qps                   float64
	gcTimeout             time.Duration
	sizesOnly             bool
}

// run runs the benchmark; flags are the flags given, for the command line
// written with --out.
func (o scaleOptions) run(ctx context.Context, flags []string) error {
	if o.sizesOnly {
		r := status.SingleObject(o.nodes)
		fmt.Printf("single object (a map of every node's status in the profile's status) at %d nodes: %d bytes, %.1f bytes/node, passes 1 MiB at %d nodes\n",
			o.nodes, r.SingleObjectBytes, r.SingleObjectPerNode, r.SingleObjectMaxNodes)
		fmt.Printf("with 40-character node names: %d bytes, passes 1 MiB at %d nodes\n", r.SingleObjectBytesLongNames, r.SingleObjectMaxNodesLongNames)
		return nil
	}
	if o.kubeconfig == "" {
		return cli.Usagef("--kubeconfig is required")
	}
	if o.nodes < 1 || o.nprof < 1 {
		return cli.Usagef("--nodes and --profiles must be positive")
	}
	if o.ns == "" {
		o.ns = fmt.Sprintf("skewproof-scale-%04d", rand.Intn(10000))
	}
	cfg, err := kubeclient.Config(o.kubeconfig)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), int(o.qps)
	cfg.UserAgent = "skewproof-profiles-scale"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, err := profiles.NewCluster(cfg, o.ns)
	if err != nil {
		return err
	}
	// The CRDs stay afterwards: deleting CRDs makes the garbage collector
	// rebuild its monitors ('skewproof profiles teardown --crds' removes them).
	if err := c.InstallCRDs(ctx); err != nil {
		return err
	}
	p := progress.New(os.Stderr)
	p.Step("namespace %s: %d simulated nodes × %d profiles, %d writers at ≤%.0f requests/s", o.ns, o.nodes, o.nprof, o.workers, o.qps)
	r, err := status.Bench(ctx, dyn, status.BenchOptions{Namespace: o.ns, Nodes: o.nodes, Profiles: o.nprof, Workers: o.workers,
		FailedNode: o.nodes / 2, Log: p.Logger(), GCTimeout: o.gcTimeout})
	if err != nil {
		return fmt.Errorf("scale benchmark: %w (namespace %s is being deleted)", err, o.ns)
	}
	md := r.Markdown()
	fmt.Print(md)
	if o.out != "" {
		cmd := "skewproof profiles scale " + strings.Join(flags, " ")
		if err := os.WriteFile(o.out, []byte("Command: `"+cmd+"`\n\n"+md), 0o644); err != nil {
			return err
		}
	}
	return nil
}
