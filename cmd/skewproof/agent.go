package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/profiles/agentimage"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles/agent"
)

// The node agent and the aggregator run from the skewproof binary itself,
// in the image that 'skewproof run' builds from it (agentimage.Load):
// hidden commands, with the argv of profiles/agent's DaemonSet and Deployment.
func newAgentCmd() *cobra.Command {
	var o agentOptions
	c := &cobra.Command{
		Use:    "agent",
		Short:  "node agent: put profiles on this node, report its status (runs in a DaemonSet)",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	fs := c.Flags()
	fs.StringVar(&o.node, "node", os.Getenv("NODE_NAME"), "this node's name (downward API spec.nodeName)")
	fs.StringVar(&o.ns, "namespace", agent.DefaultNamespace, "namespace of the profiles and node statuses")
	fs.StringVar(&o.root, "seccomp-root", agent.SeccompMount, "the kubelet's seccomp root as mounted in the agent")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig (default: in-cluster)")
	fs.DurationVar(&o.resync, "resync", 10*time.Second, "informer resync period (failed installs are retried, deleted profiles swept)")
	fs.BoolVar(&o.loadAppArmor, "apparmor-load", true, "load AppArmorProfiles with apparmor_parser where the node has AppArmor (false: the agent has not the privileges; such nodes report Failed)")
	fs.StringVar(&o.staticPodDir, "static-pod-dir", "", "the node's static pod directory as mounted in the agent (empty: StaticPods of this node fail)")
	fs.StringVar(&o.staticPodPath, "static-pod-path", agent.DefaultStaticPodPath, "that directory's path on the node (the kubelet's staticPodPath), for the status")
	c.AddCommand(newAgentAggregateCmd(), &cobra.Command{
		Use:   "host-facts",
		Short: "print the facts of this node's kernel the oracle asks about (cgroup version, seccomp, AppArmor) as JSON",
		Args:  noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return json.NewEncoder(cmd.OutOrStdout()).Encode(nodefacts.Host())
		},
	}, &cobra.Command{
		Use:                "probe",
		Short:              "startup probe of the node agent (ready once its first sync is done)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			if _, err := os.Stat(agent.ReadyFile); err != nil {
				return fmt.Errorf("not ready: no first sync yet")
			}
			return nil
		},
	})
	return c
}

type agentOptions struct {
	node, ns, root, kubeconfig, staticPodDir, staticPodPath string
	resync                                                  time.Duration
	loadAppArmor                                            bool
}

func (o agentOptions) run(ctx context.Context) error {
	cfg, err := kubeclient.Config(o.kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "skewproof-agent/" + o.node
	c, err := kubeclient.New(cfg)
	if err != nil {
		return err
	}
	dyn, core := c.Dynamic, c.Core
	_ = os.Remove(agent.ReadyFile)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	a, err := agent.New(agent.Config{Node: o.node, Namespace: o.ns, SeccompRoot: o.root, Dynamic: dyn, Core: core,
		Resync: o.resync, Log: logger, NoAppArmorLoad: !o.loadAppArmor, StaticPodDir: o.staticPodDir, StaticPodPath: o.staticPodPath})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if ok, why := agent.AppArmorEnabled(agent.DefaultAppArmorEnabledFile); !ok {
		logger.Info("AppArmor profiles will be reported Unsupported", "node", o.node, "why", why)
	} else if !o.loadAppArmor {
		logger.Info("AppArmor is enabled, but this agent may not load profiles (--apparmor-load=false)", "node", o.node)
	} else if p, err := exec.LookPath("apparmor_parser"); err != nil {
		logger.Warn("AppArmor is enabled, but the agent image has no apparmor_parser: AppArmor profiles will fail", "node", o.node)
	} else {
		logger.Info("AppArmor is enabled; loading AppArmor profiles", "node", o.node, "parser", p)
	}
	logger.Info("keeping the profiles of a namespace", "node", o.node, "namespace", o.ns, "dir", a.Dir())
	if o.staticPodDir != "" {
		logger.Info("writing the StaticPods of a namespace", "node", o.node, "namespace", o.ns, "dir", o.staticPodPath)
	}
	return a.Run(ctx, func() {
		if err := os.WriteFile(agent.ReadyFile, []byte("ok\n"), 0o644); err != nil {
			logger.Error("writing the ready file", "file", agent.ReadyFile, "err", err)
		}
	})
}

// agentImageFromSelf builds the node agent image from this (static) binary
// with build (agentimage.Load or SaveAgentImage) and warns when the
// image has no apparmor_parser.
func agentImageFromSelf(build func(bin string) (agentimage.Image, error)) (agentimage.Image, error) {
	bin, err := os.Executable()
	if err != nil {
		return agentimage.Image{}, err
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
