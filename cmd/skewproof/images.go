package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/profiles/agentimage"
	"github.com/skewproof/skewproof/skew/release"
)

func newImagesCmd() *cobra.Command {
	return group("images", "build, list and remove node images; write the agent and conformance images",
		newImagesBuildCmd(), newImagesListCmd(), newImagesPruneCmd(), newImagesAgentCmd(), newImagesConformanceCmd(), newImagesUMLKernelCmd())
}

func newImagesUMLKernelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "uml-kernel",
		Short: "build (once, from Debian's kernel source) the User-Mode Linux kernel of --apparmor-node and print its path",
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := clusters.NewProvider(progress.New(os.Stderr)).AppArmorNodeKernel(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Println(k)
			return nil
		},
	}
}

func newImagesBuildCmd() *cobra.Command {
	var k8s, kubelet string
	c := &cobra.Command{
		Use:   "build",
		Short: "build a node image offline (--kubernetes X.Y.Z [--kubelet A.B.C])",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			kl := release.BareVersion(kubelet)
			if kl == "" {
				kl = release.BareVersion(k8s)
			}
			if err := checkPair(ctx, k8s, []string{kl}, true); err != nil {
				return err
			}
			if err := dockerReady(ctx); err != nil {
				return err
			}
			// Only this node image (the control plane's is not built for a worker's).
			prov := clusters.NewProvider(nil)
			b, err := prov.PlanBuilds(ctx, k8s, []string{kl}, map[string]string{"": "not built by images build"})
			if err != nil {
				return err
			}
			if kl == release.BareVersion(k8s) {
				b, err = prov.PlanBuilds(ctx, k8s, nil, nil)
				if err != nil {
					return err
				}
			}
			b.Nodes = 0
			if err := capacity.CheckDiskFits(ctx, b); err != nil {
				return cli.Usagef("%v", err)
			}
			ref, err := clusters.NewProvider(progress.New(os.Stderr)).BuildNodeImage(ctx, release.BareVersion(k8s), noderuntime.Worker{Kubelet: kl})
			if err != nil {
				return err
			}
			fmt.Println(ref)
			return nil
		},
	}
	c.Flags().StringVar(&k8s, "kubernetes", DefaultAPIServer, "control-plane Kubernetes version (kubeadm, kubectl, control-plane images)")
	c.Flags().StringVar(&kubelet, "kubelet", "", "kubelet version of the node (default: --kubernetes)")
	return c
}

func newImagesListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list the node images and the image cache",
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := clusters.NewProvider(nil).ListImages(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Print(out)
			return nil
		},
	}
}

func newImagesPruneCmd() *cobra.Command {
	keep := -1
	c := &cobra.Command{
		Use:   "prune [--keep N]",
		Short: "remove every node image and cached build of skewproof, or with --keep N all node images but the newest N (the build cache stays); the AppArmor node disks of removed images go too",
		RunE: func(cmd *cobra.Command, _ []string) error {
			prov := clusters.NewProvider(progress.New(os.Stderr))
			if cmd.Flags().Changed("keep") {
				if keep < 0 {
					return cli.Usagef("--keep must be 0 or more")
				}
				return prov.PruneNodeImages(cmd.Context(), keep)
			}
			return prov.PruneImages(cmd.Context())
		},
	}
	c.Flags().IntVar(&keep, "keep", -1, "keep the newest N node images; remove only older node images")
	return c
}

func newImagesAgentCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "agent",
		Short: "write the node agent image as a docker-save archive (--output FILE), for clusters that pull from a registry",
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cli.Usagef("--output is required, e.g. --output skewproof-agent.tar")
			}
			if len(args) > 0 {
				return cli.Usagef("unexpected argument %q", args[0])
			}
			img, err := agentImageFromSelf(func(bin string) (agentimage.Image, error) {
				return agentimage.Save(cmd.Context(), bin, out)
			})
			if err != nil {
				return err
			}
			fmt.Printf("%s written to %s\nload it (docker load -i %s), tag and push it to the nodes' registry, then pass the pushed reference to 'skewproof run --agent-image'\n", img.Ref, out, out)
			return nil
		},
	}
	c.Flags().StringVar(&out, "output", "", "archive to write (docker-save format), e.g. skewproof-agent.tar")
	return c
}
