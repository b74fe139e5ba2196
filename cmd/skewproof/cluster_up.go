package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/skew/release"
)

func newClusterUpCmd() *cobra.Command {
	var name, apiserver, kubelets, kubeconfig, appArmorNode, umlKernel string
	var imageArgs, gateArgs, ociArgs []string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "up",
		Short: "create a kind cluster: control plane at --apiserver, one worker per --kubelets version",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			apiserver = release.BareVersion(apiserver)
			gates, err := featureGates(gateArgs)
			if err != nil {
				return err
			}
			images := nodeImages(imageArgs)
			w, err := parseWorkers(splitList(kubelets), ociArgs, "", appArmorNode)
			if err != nil {
				return err
			}
			kl, runtimes, ociRuntimes := w.kubelets, w.runtimes, w.vendor
			if len(kl) == 0 {
				kl = []string{apiserver}
			}
			if err := validName(name); err != nil {
				return err
			}
			needSources := false
			if _, ok := images[""]; !ok {
				needSources = true
			}
			for _, k := range kl {
				if _, ok := images[k]; !ok && k != apiserver {
					needSources = true
				}
			}
			aa, err := resolveAppArmorNodes(appArmorNode, workersOf(kl, runtimes), autoAddsAppArmorNodes(nil), ociRuntimes)
			if err != nil {
				return err
			}
			if umlKernel != "" && len(aa) == 0 {
				return cli.Usagef("--uml-kernel is the kernel of the AppArmor nodes: give --apparmor-node with it")
			}
			if err := checkAppArmorNodes(ctx, apiserver, aa); err != nil {
				return err
			}
			if err := checkPair(ctx, apiserver, kl, needSources); err != nil {
				return err
			}
			if err := checkGates(gates, apiserver, kl); err != nil {
				return err
			}
			if err := capacity.CheckClusterFits(len(kl) + len(aa)*umlNodeWorkers); err != nil {
				return cli.Usagef("%v", err)
			}
			if err := capacity.CheckInotifyFits(1, len(kl)); err != nil {
				return cli.Usagef("%v", err)
			}
			if err := dockerReady(ctx); err != nil {
				return err
			}
			if err := appArmorHostReady(len(aa) > 0, umlKernel); err != nil {
				return err
			}
			if b, err := clusters.NewProvider(nil).PlanBuilds(ctx, apiserver, kl, images, runtimes...); err != nil {
				return err
			} else if err := capacity.CheckDiskFits(ctx, b); err != nil {
				return cli.Usagef("%v", err)
			}
			p := progress.New(os.Stderr)
			cl, err := clusters.NewProvider(p).Up(ctx, clusters.UpOptions{
				Name: name, APIServer: apiserver, Kubelets: kl, Runtimes: runtimes, OCIRuntimes: ociRuntimes, Kubeconfig: kubeconfig,
				NodeImages: images, ReadyTimeout: timeout,
				FeatureGates: gates, AppArmorNodes: aa, UMLKernel: umlKernel,
			})
			if err != nil {
				return err
			}
			p.Step("cluster %s ready", cl.Name)
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tROLE\tKUBELET\tPOD CIDR")
			for _, n := range cl.Nodes {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Role, n.KubeletVersion, n.PodCIDR)
			}
			_ = tw.Flush()
			fmt.Printf("kubeconfig: %s\n", cl.Kubeconfig)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&name, "name", "skewproof", "cluster name")
	fs.StringVar(&apiserver, "apiserver", DefaultAPIServer, "kube-apiserver (control plane) version")
	fs.StringVar(&kubelets, "kubelets", "", kubeletsUsage)
	fs.StringArrayVar(&ociArgs, "oci-runtime", nil, ociRuntimeUsage)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "where to write the kubeconfig (default ~/.kube/skewproof-NAME.yaml)")
	fs.DurationVar(&timeout, "wait", 5*time.Minute, "how long to wait for nodes and kube-system pods to be ready")
	fs.StringVar(&appArmorNode, "apparmor-node", appArmorNodesOff, appArmorNodeUsage)
	fs.StringVar(&umlKernel, "uml-kernel", "", umlKernelUsage)
	fs.StringArrayVar(&gateArgs, "feature-gates", nil, "feature gates for every component of the cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.StringArrayVar(&imageArgs, "node-image", nil, nodeImageUsage)
	return c
}

const umlKernelUsage = "the User-Mode Linux kernel of the --apparmor-node (default: the one skewproof builds); it needs everything the node uses built in (see clusters/internal/uml/kernel/skewproof-uml.config)"
