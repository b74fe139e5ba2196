package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/agentimage"
)

func newProfilesCmd() *cobra.Command {
	return group("profiles", "deploy the profile agent, install profiles and read their status; scale benchmark",
		newProfilesScaleCmd(), newProfilesDeployCmd(), newProfilesInstallCmd(), newProfilesStatusCmd(), newProfilesTeardownCmd())
}

// connectFlags are the flags of the profiles commands that name the cluster
// and the agent's namespace.
type connectFlags struct{ kubeconfig, namespace string }

// profilesCmd returns a profiles subcommand with the connect flags; run gets
// the connected cluster.
func profilesCmd(use, short string, run func(ctx context.Context, c *profiles.Cluster) error) *cobra.Command {
	var f connectFlags
	c := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.kubeconfig == "" {
				return cli.Usagef("--kubeconfig is required")
			}
			if len(args) > 0 {
				return cli.Usagef("unexpected argument %q", args[0])
			}
			if err := checkKubeconfig(f.kubeconfig); err != nil {
				return err
			}
			pc, err := profiles.Connect(f.kubeconfig, f.namespace)
			if err != nil {
				return err
			}
			// One line when the cluster is not there, before any of the
			// command's requests fails on its own.
			_, err = pc.Core.Discovery().ServerVersion()
			if err := kubeclient.Unreachable(f.kubeconfig, err); err != nil {
				return err
			}
			return kubeclient.WithRemedy(oneLine(run(cmd.Context(), pc)), "grant the permissions 'skewproof rbac --profiles-namespace "+f.namespace+"' prints (docs/rbac.md)")
		},
	}
	c.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (required)")
	c.Flags().StringVar(&f.namespace, "namespace", agent.DefaultNamespace, "namespace of the agent, the profiles and their node statuses")
	return c
}

func newProfilesDeployCmd() *cobra.Command {
	var image, kubeletRoot, staticPodPath string
	var timeout time.Duration
	var seccompOnly bool
	cmd := profilesCmd("deploy", "deploy the profile agent (CRDs, RBAC, DaemonSet, aggregator) into a cluster", func(ctx context.Context, c *profiles.Cluster) error {
		return profilesDeploy(ctx, c, image, agent.DeployOptions{KubeletRoot: kubeletRoot, SeccompOnly: seccompOnly,
			StaticPodPath: staticPodPath, NoStaticPods: staticPodPath == ""}, timeout)
	})
	fs := cmd.Flags()
	fs.StringVar(&image, "image", "", "agent image present on every node (default: build it from this binary and load it into the kind node containers)")
	fs.StringVar(&kubeletRoot, "kubelet-root", "/var/lib/kubelet", "kubelet --root-dir of the nodes")
	fs.DurationVar(&timeout, "timeout", 3*time.Minute, "how long to wait for the agent to be Ready on every node")
	fs.BoolVar(&seccompOnly, "seccomp-only", false, "deploy the agent without what loading AppArmor profiles needs (securityfs, CAP_MAC_ADMIN, AppArmor unconfined)")
	fs.StringVar(&staticPodPath, "static-pod-path", agent.DefaultStaticPodPath, "the kubelets' staticPodPath on the nodes, where the agent writes the manifests of StaticPods (empty: no static pods)")
	return cmd
}

// profilesDeploy deploys the agent, with an image built from this binary
// and loaded into the nodes when image is empty.
func profilesDeploy(ctx context.Context, c *profiles.Cluster, image string, o agent.DeployOptions, timeout time.Duration) error {
	if image == "" {
		nl, err := c.Core.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing nodes: %w", err)
		}
		var nodes []string
		for _, n := range nl.Items {
			nodes = append(nodes, n.Name)
		}
		fmt.Fprintf(os.Stderr, "loading the agent image into %s\n", strings.Join(nodes, ", "))
		img, err := agentImageFromSelf(func(bin string) (agentimage.Image, error) { return agentimage.Load(ctx, bin, nodes) })
		if err != nil {
			return fmt.Errorf("%w; or pass --image", err)
		}
		image = img.Ref
		if img.AppArmorParser != "" {
			fmt.Fprintf(os.Stderr, "agent image %s with apparmor_parser from %s\n", img.Ref, img.AppArmorParser)
		}
	}
	o.Image = image
	if err := c.Deploy(ctx, o, timeout); err != nil {
		return err
	}
	fmt.Printf("agent %s Ready on every node (namespace %s)\n", image, c.Namespace)
	return nil
}

func newProfilesInstallCmd() *cobra.Command {
	var timeout time.Duration
	cmd := profilesCmd("install", "install skewproof's seccomp profiles on every node through the agent", func(ctx context.Context, c *profiles.Cluster) error {
		rep, err := profiles.Install(ctx, c, profiles.FixtureManifests(), nil, profiles.InstallOptions{Timeout: timeout})
		for _, r := range rep {
			fmt.Printf("%-16s %-14s %s\n", r.Manifest.Name, r.Aggregate, r.LocalhostProfile)
		}
		return err
	})
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for every node")
	return cmd
}

func newProfilesTeardownCmd() *cobra.Command {
	var crds bool
	cmd := profilesCmd("teardown", "remove the profile agent, its profiles and (with --crds) the CRDs", func(ctx context.Context, c *profiles.Cluster) error {
		return c.Teardown(ctx, crds)
	})
	cmd.Flags().BoolVar(&crds, "crds", false, "also delete the CRDs (and so every profile in every namespace)")
	return cmd
}

// oneLine keeps the first line of an error that joins several (teardown's
// deletions) and says how many more there were; errors.Is and As still see
// the original.
func oneLine(err error) error {
	if err == nil || !strings.Contains(strings.TrimSpace(err.Error()), "\n") {
		return err
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	return firstLineError{fmt.Sprintf("%s (and %d more errors like it)", lines[0], len(lines)-1), err}
}

type firstLineError struct {
	msg string
	err error
}

func (e firstLineError) Error() string { return e.msg }
func (e firstLineError) Unwrap() error { return e.err }
