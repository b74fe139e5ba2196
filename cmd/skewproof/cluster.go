package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skewproof/skewproof/clusters"
)

// DefaultAPIServer is the apiserver version used when none is given.
const DefaultAPIServer = "1.37.2"

type nodeImageFlag map[string]string

func (f nodeImageFlag) String() string { return fmt.Sprint(map[string]string(f)) }
func (f nodeImageFlag) Set(s string) error {
	if k, v, ok := strings.Cut(s, "="); ok && !strings.Contains(k, "/") && !strings.Contains(k, ":") {
		f[strings.TrimPrefix(k, "v")] = v
		return nil
	}
	f[""] = s
	return nil
}

func init() {
	register(command{name: "cluster up", summary: "create a kind cluster: control plane at --apiserver, one worker per --kubelets version", run: clusterUp})
	register(command{name: "cluster down", summary: "delete a cluster and everything it created", run: clusterDown})
	register(command{name: "cluster list", summary: "list the clusters", run: clusterList})
}

func clusterUp(ctx context.Context, args []string) error {
	fs := newFlagSet("cluster up")
	name := fs.String("name", "skewproof", "cluster name")
	apiserver := fs.String("apiserver", DefaultAPIServer, "kube-apiserver (control plane) version")
	kubelets := fs.String("kubelets", "", "comma-separated kubelet versions, one worker each (default: the apiserver version)")
	kubeconfig := fs.String("kubeconfig", "", "where to write the kubeconfig (default ~/.kube/skewproof-NAME.yaml)")
	timeout := fs.Duration("wait", 5*time.Minute, "how long to wait for nodes and kube-system pods to be ready")
	images := nodeImageFlag{}
	gates := featureGatesFlag{}
	appArmorNode := fs.String("apparmor-node", "", appArmorNodeUsage)
	fs.Var(gates, "feature-gates", "feature gates for every component of the cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.Var(images, "node-image", "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	kl := splitList(*kubelets)
	if len(kl) == 0 {
		kl = []string{strings.TrimPrefix(*apiserver, "v")}
	}
	if err := validName(*name); err != nil {
		return err
	}
	needSources := false
	if _, ok := images[""]; !ok {
		needSources = true
	}
	for _, k := range kl {
		if _, ok := images[k]; !ok && k != strings.TrimPrefix(*apiserver, "v") {
			needSources = true
		}
	}
	if err := checkAppArmorNode(ctx, *apiserver, *appArmorNode); err != nil {
		return err
	}
	if err := checkPair(ctx, *apiserver, kl, needSources); err != nil {
		return err
	}
	if err := gates.check(*apiserver, kl); err != nil {
		return err
	}
	if _, err := clusters.List(ctx); err != nil {
		return err
	}
	p := clusters.NewProgress(os.Stderr)
	c, err := clusters.Up(ctx, clusters.UpOptions{
		Name: *name, APIServer: strings.TrimPrefix(*apiserver, "v"), Kubelets: kl, Kubeconfig: *kubeconfig,
		NodeImages: images, CgroupV1: clusters.DetectHost().CgroupVersion == 1, ReadyTimeout: *timeout, Progress: p,
		FeatureGates: gates, AppArmorHost: clusters.DetectHost().AppArmor, AppArmorNode: strings.TrimPrefix(*appArmorNode, "v"),
	})
	if err != nil {
		return err
	}
	p.Step("cluster %s ready", c.Name)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tKUBELET\tPOD CIDR")
	for _, n := range c.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Role, n.KubeletVersion, n.PodCIDR)
	}
	tw.Flush()
	fmt.Printf("kubeconfig: %s\n", c.Kubeconfig)
	return nil
}

const appArmorNodeUsage = "kubelet version of one more worker whose kernel is User-Mode Linux with AppArmor enabled, for hosts without AppArmor (needs Debian's user-mode-linux: 'sudo hack/setup-host.sh --uml')"

// checkAppArmorNode validates --apparmor-node: a version the skew policy
// allows with the apiserver, and a host that can run User-Mode Linux.
func checkAppArmorNode(ctx context.Context, apiserver, v string) error {
	if v == "" {
		return nil
	}
	if err := checkPair(ctx, apiserver, []string{strings.TrimPrefix(v, "v")}, true); err != nil {
		return fmt.Errorf("--apparmor-node: %w", err)
	}
	if err := clusters.AppArmorNodeReady(); err != nil {
		return usagef("--apparmor-node: %v", err)
	}
	return nil
}

func validName(n string) error {
	if n == "" || len(n) > 40 {
		return usagef("--name must be 1-40 characters")
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return usagef("--name %q: use lower-case letters, digits and '-'", n)
		}
	}
	return nil
}

func clusterDown(ctx context.Context, args []string) error {
	fs := newFlagSet("cluster down")
	name := fs.String("name", "skewproof", "cluster name")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig the cluster was written to (default ~/.kube/skewproof-NAME.yaml)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := clusters.List(ctx); err != nil {
		return err
	}
	p := clusters.NewProgress(os.Stderr)
	if err := clusters.Down(ctx, *name, *kubeconfig, p); err != nil {
		return err
	}
	p.Step("cluster %s deleted", *name)
	return nil
}

func clusterList(ctx context.Context, args []string) error {
	fs := newFlagSet("cluster list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names, err := clusters.List(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Println(n)
	}
	return nil
}
