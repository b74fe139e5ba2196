package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
)

func init() {
	register(command{name: "images build", summary: "build a node image offline (--kubernetes X.Y.Z [--kubelet A.B.C])", run: imagesBuild})
	register(command{name: "images list", summary: "list the node images and the image cache", run: imagesList})
	register(command{name: "images prune", summary: "remove every node image and cached build of skewproof", run: imagesPrune})
	register(command{name: "images agent", summary: "write the node agent image as a docker-save archive (--output FILE), for clusters that pull from a registry", run: imagesAgent})
}

func imagesBuild(ctx context.Context, args []string) error {
	fs := newFlagSet("images build")
	k8s := fs.String("kubernetes", DefaultAPIServer, "control-plane Kubernetes version (kubeadm, kubectl, control-plane images)")
	kubelet := fs.String("kubelet", "", "kubelet version of the node (default: --kubernetes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	kl := strings.TrimPrefix(*kubelet, "v")
	if kl == "" {
		kl = strings.TrimPrefix(*k8s, "v")
	}
	if err := checkPair(ctx, *k8s, []string{kl}, true); err != nil {
		return err
	}
	if _, err := clusters.List(ctx); err != nil {
		return err
	}
	p := clusters.NewProgress(os.Stderr)
	ref, err := clusters.BuildNodeImage(ctx, p, clusters.NodeImageSpec{ControlPlane: strings.TrimPrefix(*k8s, "v"), Kubelet: kl})
	if err != nil {
		return err
	}
	fmt.Println(ref)
	return nil
}

func imagesList(ctx context.Context, args []string) error {
	fs := newFlagSet("images list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	out, err := clusters.ListImages(ctx)
	if err != nil {
		return err
	}
	fmt.Print(out)
	return nil
}

func imagesPrune(ctx context.Context, args []string) error {
	fs := newFlagSet("images prune")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return clusters.PruneImages(ctx, clusters.NewProgress(os.Stderr))
}

func imagesAgent(ctx context.Context, args []string) error {
	fs := newFlagSet("images agent")
	out := fs.String("output", "", "archive to write (docker-save format), e.g. skewproof-agent.tar")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--output is required, e.g. --output skewproof-agent.tar")
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	img, err := agentImageFromSelf(func(bin string) (profiles.AgentImage, error) { return profiles.SaveAgentImage(ctx, bin, *out) })
	if err != nil {
		return err
	}
	fmt.Printf("%s written to %s\nload it (docker load -i %s), tag and push it to the nodes' registry, then pass the pushed reference to 'skewproof run --agent-image'\n", img.Ref, *out, *out)
	return nil
}
