package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

func init() {
	register(command{name: "profiles scale", summary: "scale benchmark of per-node profile status objects against a real API server", run: runProfilesScale})
	register(command{name: "profiles deploy", summary: "deploy the profile agent (CRDs, RBAC, DaemonSet, aggregator) into a cluster", run: runProfilesDeploy})
	register(command{name: "profiles install", summary: "install skewproof's seccomp profiles on every node through the agent", run: runProfilesInstall})
	register(command{name: "profiles status", summary: "show each profile's aggregated status and its node statuses", run: runProfilesStatus})
	register(command{name: "profiles teardown", summary: "remove the profile agent, its profiles and (with --crds) the CRDs", run: runProfilesTeardown})
}

func connectProfiles(fs *flag.FlagSet, args []string) (*profiles.Cluster, error) {
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	ns := fs.String("namespace", agent.DefaultNamespace, "namespace of the agent, the profiles and their node statuses")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *kubeconfig == "" {
		return nil, usagef("--kubeconfig is required")
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	return profiles.Connect(*kubeconfig, *ns)
}

func runProfilesDeploy(ctx context.Context, args []string) error {
	fs := newFlagSet("profiles deploy")
	image := fs.String("image", "", "agent image present on every node (default: build it from this binary and load it into the kind node containers)")
	kubeletRoot := fs.String("kubelet-root", "/var/lib/kubelet", "kubelet --root-dir of the nodes")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long to wait for the agent to be Ready on every node")
	seccompOnly := fs.Bool("seccomp-only", false, "deploy the agent without what loading AppArmor profiles needs (securityfs, CAP_MAC_ADMIN, AppArmor unconfined)")
	staticPodPath := fs.String("static-pod-path", agent.DefaultStaticPodPath, "the kubelets' staticPodPath on the nodes, where the agent writes the manifests of StaticPods (empty: no static pods)")
	c, err := connectProfiles(fs, args)
	if err != nil {
		return err
	}
	if *image == "" {
		nl, err := c.Core.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing nodes: %w", err)
		}
		var nodes []string
		for _, n := range nl.Items {
			nodes = append(nodes, n.Name)
		}
		fmt.Fprintf(os.Stderr, "loading the agent image into %s\n", strings.Join(nodes, ", "))
		img, err := agentImageFromSelf(func(bin string) (profiles.AgentImage, error) { return profiles.LoadAgentImage(ctx, bin, nodes) })
		if err != nil {
			return fmt.Errorf("%w; or pass --image", err)
		}
		*image = img.Ref
		if img.AppArmorParser != "" {
			fmt.Fprintf(os.Stderr, "agent image %s with apparmor_parser from %s\n", img.Ref, img.AppArmorParser)
		}
	}
	if err := c.Deploy(ctx, agent.DeployOptions{Image: *image, KubeletRoot: *kubeletRoot, SeccompOnly: *seccompOnly,
		StaticPodPath: *staticPodPath, NoStaticPods: *staticPodPath == ""}, *timeout); err != nil {
		return err
	}
	fmt.Printf("agent %s Ready on every node (namespace %s)\n", *image, c.Namespace)
	return nil
}

func runProfilesInstall(ctx context.Context, args []string) error {
	fs := newFlagSet("profiles install")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for every node")
	c, err := connectProfiles(fs, args)
	if err != nil {
		return err
	}
	rep, err := profiles.Install(ctx, c, profiles.FixtureManifests(), nil, profiles.InstallOptions{Timeout: *timeout})
	for _, r := range rep {
		fmt.Printf("%-16s %-14s %s\n", r.Manifest.Name, r.Aggregate, r.LocalhostProfile)
	}
	return err
}

func runProfilesStatus(ctx context.Context, args []string) error {
	fs := newFlagSet("profiles status")
	c, err := connectProfiles(fs, args)
	if err != nil {
		return err
	}
	for _, kind := range []string{api.KindSeccompProfile, api.KindAppArmorProfile} {
		res, _ := api.Resource(kind)
		l, err := c.Dynamic.Resource(res).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", res.Resource, err)
		}
		for i := range l.Items {
			p, err := api.ProfileFromUnstructured(&l.Items[i])
			if err != nil {
				return err
			}
			fmt.Printf("%s %s: %s (localhostProfile %s)\n", kind, p.Name, orDash(string(p.Status.Status)), p.LocalhostProfile())
			states, err := status.ListNodeStates(ctx, c.Dynamic, p)
			if err != nil {
				return err
			}
			for _, s := range states {
				fmt.Printf("  %-28s %-12s %s\n", s.Node, s.Status, s.Message)
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runProfilesTeardown(ctx context.Context, args []string) error {
	fs := newFlagSet("profiles teardown")
	crds := fs.Bool("crds", false, "also delete the CRDs (and so every profile in every namespace)")
	c, err := connectProfiles(fs, args)
	if err != nil {
		return err
	}
	return c.Teardown(ctx, *crds)
}

func runProfilesScale(ctx context.Context, args []string) error {
	fs := newFlagSet("profiles scale")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster whose API server is measured (required)")
	nodes := fs.Int("nodes", 5000, "simulated nodes (names only: no Node objects are created)")
	nprof := fs.Int("profiles", 3, "profiles")
	workers := fs.Int("workers", 4, "concurrent writers")
	qps := fs.Float64("qps", 100, "client-side limit of requests per second")
	ns := fs.String("namespace", "", "namespace to create and delete (default skewproof-scale-<random>)")
	out := fs.String("out", "", "also write the Markdown table to this file")
	gcTimeout := fs.Duration("gc-timeout", 15*time.Minute, "how long to wait for the garbage collector to remove the node statuses")
	sizesOnly := fs.Bool("single-object-only", false, "only size the single-object alternative for --nodes (no cluster needed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sizesOnly {
		r := status.SingleObject(*nodes)
		fmt.Printf("single object (a map of every node's status in the profile's status) at %d nodes: %d bytes, %.1f bytes/node, passes 1 MiB at %d nodes\n",
			*nodes, r.SingleObjectBytes, r.SingleObjectPerNode, r.SingleObjectMaxNodes)
		fmt.Printf("with 40-character node names: %d bytes, passes 1 MiB at %d nodes\n", r.SingleObjectBytesLongNames, r.SingleObjectMaxNodesLongNames)
		return nil
	}
	if *kubeconfig == "" {
		return usagef("--kubeconfig is required")
	}
	if *nodes < 1 || *nprof < 1 {
		return usagef("--nodes and --profiles must be positive")
	}
	if *ns == "" {
		*ns = fmt.Sprintf("skewproof-scale-%04d", rand.Intn(10000))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return usagef("reading kubeconfig %s: %v", *kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(*qps), int(*qps)
	cfg.UserAgent = "skewproof-profiles-scale"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, err := profiles.NewCluster(cfg, *ns)
	if err != nil {
		return err
	}
	// The CRDs stay afterwards: deleting CRDs makes the garbage collector
	// rebuild its monitors ('skewproof profiles teardown --crds' removes them).
	if err := c.InstallCRDs(ctx); err != nil {
		return err
	}
	start := time.Now()
	logf := func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(f, a...))
	}
	logf("namespace %s: %d simulated nodes × %d profiles, %d writers at ≤%.0f requests/s", *ns, *nodes, *nprof, *workers, *qps)
	r, err := status.Bench(ctx, dyn, status.BenchOptions{Namespace: *ns, Nodes: *nodes, Profiles: *nprof, Workers: *workers,
		FailedNode: *nodes / 2, Logf: logf, GCTimeout: *gcTimeout})
	if err != nil {
		return fmt.Errorf("scale benchmark: %w (namespace %s is being deleted)", err, *ns)
	}
	md := r.Markdown()
	fmt.Print(md)
	if *out != "" {
		cmd := "skewproof profiles scale " + strings.Join(args, " ")
		if err := os.WriteFile(*out, []byte("Command: `"+cmd+"`\n\n"+md), 0o644); err != nil {
			return err
		}
	}
	return nil
}
