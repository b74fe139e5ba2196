package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/skew"
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
			apiserver = skew.BareVersion(apiserver)
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
			if umlKernel != "" && appArmorNode == "" {
				return usagef("--uml-kernel is the kernel of the AppArmor node: give --apparmor-node VERSION with it")
			}
			aa, err := checkAppArmorNode(ctx, apiserver, appArmorNode, umlKernel, ociRuntimes)
			if err != nil {
				return err
			}
			if err := checkPair(ctx, apiserver, kl, needSources); err != nil {
				return err
			}
			if err := checkGates(gates, apiserver, kl); err != nil {
				return err
			}
			if err := capacity.CheckClusterFits(len(kl)); err != nil {
				return usagef("%v", err)
			}
			if err := dockerReady(ctx); err != nil {
				return err
			}
			if b, err := clusters.NewProvider(nil).PlanBuilds(ctx, apiserver, kl, images, runtimes...); err != nil {
				return err
			} else if err := capacity.CheckDiskFits(ctx, b); err != nil {
				return usagef("%v", err)
			}
			p := progress.New(os.Stderr)
			cl, err := clusters.NewProvider(p).Up(ctx, clusters.UpOptions{
				Name: name, APIServer: apiserver, Kubelets: kl, Runtimes: runtimes, OCIRuntimes: ociRuntimes, Kubeconfig: kubeconfig,
				NodeImages: images, ReadyTimeout: timeout,
				FeatureGates: gates, AppArmorNode: aa.Kubelet, AppArmorNodeRuntime: aa.Runtime, UMLKernel: umlKernel,
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
	fs.StringVar(&appArmorNode, "apparmor-node", "", appArmorNodeUsage)
	fs.StringVar(&umlKernel, "uml-kernel", "", umlKernelUsage)
	fs.StringArrayVar(&gateArgs, "feature-gates", nil, "feature gates for every component of the cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.StringArrayVar(&imageArgs, "node-image", nil, nodeImageUsage)
	return c
}

const appArmorNodeUsage = "kubelet version of one more worker whose kernel is User-Mode Linux with AppArmor enabled, for hosts without AppArmor, optionally with its container runtime as in --kubelets, e.g. 1.37.2@crio+crun (skewproof builds the kernel once from Debian's kernel source; 'sudo hack/setup-host.sh --uml' installs what that needs)"

const umlKernelUsage = "the User-Mode Linux kernel of the --apparmor-node (default: the one skewproof builds); it needs everything the node uses built in (see clusters/internal/uml/kernel/skewproof-uml.config)"

// checkAppArmorNode validates --apparmor-node, VERSION[@CRI][+OCI] as a
// --kubelets entry (vendor: the --oci-runtime binaries): a version the skew
// policy allows with the apiserver, and a host that can run User-Mode
// Linux. It returns the node's kubelet version and runtime.
func checkAppArmorNode(ctx context.Context, apiserver, v, kernel string, vendor map[string]string) (clusters.Worker, error) {
	if v == "" {
		return clusters.Worker{}, nil
	}
	w, err := clusters.ParseWorker(v, vendor)
	if err != nil {
		return w, usagef("--apparmor-node %v", err)
	}
	w.Kubelet = skew.BareVersion(w.Kubelet)
	if err := checkPair(ctx, apiserver, []string{w.Kubelet}, true); err != nil {
		return w, fmt.Errorf("--apparmor-node: %w", err)
	}
	if err := clusters.NewProvider(nil).AppArmorNodeReady(kernel); err != nil {
		return w, usagef("--apparmor-node: %v", err)
	}
	return w, nil
}
