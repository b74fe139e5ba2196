package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"

	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/uml"
)

// AppArmorNodeName is the Kubernetes node name of a cluster's User-Mode
// Linux node.
func AppArmorNodeName(cluster string) string { return cluster + "-uml-worker" }

// appArmorNodeReady says what this host lacks to run an AppArmor node (one
// line with the remedy), nil when nothing. kernel is the UML kernel a user
// gives, "" for the one skewproof builds (it then checks the build's tools
// unless the kernel is cached).
func appArmorNodeReady(kernel string) error {
	cache, err := cachedir.Resolve()
	if err != nil {
		return err
	}
	return uml.HostReady(cache, kernel)
}

func umlStateRoot() (string, error) {
	dir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	return uml.StateRoot(dir), nil
}

// umlNode is the UML node of this host named name, or nil.
func umlNode(name string) *uml.Node {
	root, err := umlStateRoot()
	if err != nil {
		return nil
	}
	return uml.Find(root, name)
}

// bootAppArmorNode builds (or reuses) the disk of the worker image, starts
// the UML node on the cluster's Docker bridge, waits until the node has
// registered with a podCIDR and routes that range from every kind node.
// The caller waits for Ready. On error the node is removed.
func bootAppArmorNode(ctx context.Context, p *progress.Progress, o UpOptions, image string, cs kubernetes.Interface, infos []NodeInfo) (err error) {
	cache, err := cachedir.Resolve()
	if err != nil {
		return err
	}
	imageID, err := command.Docker(ctx, "image", "inspect", "--format", "{{.Id}}", image)
	if err != nil {
		return err
	}
	kernel := o.UMLKernel
	if kernel == "" {
		if err := p.Timed("AppArmor node kernel", func() (err error) {
			kernel, err = uml.Kernel(ctx, cache, p.Step)
			return err
		}); err != nil {
			return err
		}
	}
	var disk string
	if err := p.Timed("AppArmor node disk from "+image, func() (err error) {
		disk, err = uml.Disk(ctx, cache, image, imageID, p.Step)
		return err
	}); err != nil {
		return err
	}
	net := NetworkName(o.Name)
	out, err := command.Docker(ctx, "network", "inspect", "--format", "{{json .}}", net)
	if err != nil {
		return err
	}
	var nw struct {
		ID      string            `json:"Id"`
		Options map[string]string `json:"Options"`
		IPAM    struct {
			Config []struct{ Subnet, Gateway string }
		}
	}
	if err := json.Unmarshal([]byte(out), &nw); err != nil || len(nw.ID) < 12 {
		return fmt.Errorf("reading network %s: %v", net, err)
	}
	cfg := uml.Config{
		Name: AppArmorNodeName(o.Name), Cluster: o.Name, Disk: disk, Kernel: kernel,
		Labels: runtimeLabels(ctx, image, map[string]string{nodefacts.KubeletVersionLabel: "v" + skew.BareVersion(o.AppArmorNode), nodefacts.AppArmorKernelLabel: "true"}),
		// Docker names a network's bridge br-<id> unless an option says.
		Bridge: "br-" + nw.ID[:12],
	}
	if b := nw.Options["com.docker.network.bridge.name"]; b != "" {
		cfg.Bridge = b
	}
	for _, c := range nw.IPAM.Config {
		if strings.Contains(c.Subnet, ".") {
			cfg.Subnet, cfg.Gateway = c.Subnet, c.Gateway
		}
	}
	if cfg.Subnet == "" || cfg.Gateway == "" {
		return fmt.Errorf("network %s has no IPv4 subnet and gateway", net)
	}
	for _, i := range infos {
		if i.Role == "control-plane" {
			cfg.ControlPlaneName, cfg.ControlPlaneIP = i.Name, i.InternalIP
		}
	}
	if cfg.Token, err = command.Docker(ctx, "exec", cfg.ControlPlaneName, "kubeadm", "token", "create", "--ttl", "2h"); err != nil {
		return fmt.Errorf("a bootstrap token for the AppArmor node: %w", err)
	}
	root, err := umlStateRoot()
	if err != nil {
		return err
	}
	p.Step("booting AppArmor node %s: User-Mode Linux (%s, %d CPUs), kubelet v%s, on %s", cfg.Name, kernel, uml.Features(kernel).CPUs(), skew.BareVersion(o.AppArmorNode), cfg.Bridge)
	n, err := uml.Boot(ctx, root, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			p.Step("AppArmor node %s console (end):\n%s", n.Name, n.ConsoleTail(25))
			if o.ArtifactsDir != "" {
				for _, f := range saveAppArmorNodeConsoles(o.Name, o.ArtifactsDir) {
					p.Step("console log kept: %s", f)
				}
			}
		}
		if err != nil {
			_ = n.Remove()
		}
	}()
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go n.Milestones(mctx, p.Step)
	var node *corev1.Node
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		if !n.Running() {
			return false, fmt.Errorf("the kernel of AppArmor node %s stopped (%s)", n.Name, n.ExitStatus())
		}
		node, err = cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		return err == nil && node.Spec.PodCIDR != "", nil
	})
	if err != nil {
		return fmt.Errorf("AppArmor node %s did not join within %s: %w", n.Name, o.ReadyTimeout, err)
	}
	p.Step("AppArmor node %s registered after %.0fs, pod CIDR %s", n.Name, time.Since(start).Seconds(), node.Spec.PodCIDR)
	ip := strings.Split(n.Address, "/")[0]
	var routes strings.Builder
	for _, i := range infos {
		if _, err := command.Docker(ctx, "exec", i.Name, "ip", "route", "replace", node.Spec.PodCIDR, "via", ip); err != nil {
			return fmt.Errorf("routing the AppArmor node's pod CIDR on %s: %w", i.Name, err)
		}
		if i.PodCIDR != "" {
			fmt.Fprintf(&routes, "ip route replace %s via %s\n", i.PodCIDR, i.InternalIP)
		}
	}
	if _, err := n.Exec(ctx, nil, "sh", "-c", routes.String()); err != nil {
		return fmt.Errorf("routing the other nodes' pod CIDRs on %s: %w", n.Name, err)
	}
	return nil
}

// removeAppArmorNodes removes a cluster's UML nodes (process, tap device,
// state directory).
func removeAppArmorNodes(cluster string) error {
	root, err := umlStateRoot()
	if err != nil {
		return err
	}
	ns, err := uml.Nodes(root, cluster)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := n.Remove(); err != nil {
			return err
		}
	}
	return nil
}

// appArmorNodeClusters lists the clusters that have UML node state on this
// host (a killed run may leave one behind).
func appArmorNodeClusters() []string {
	root, err := umlStateRoot()
	if err != nil {
		return nil
	}
	ns, _ := uml.Nodes(root, "")
	var out []string
	for _, n := range ns {
		if n.Cluster != "" {
			out = append(out, n.Cluster)
		}
	}
	return out
}

// nodeExec runs a command on a node of a skewproof cluster: docker exec for
// a kind node, the exec directory for a UML node. stdin may be nil.
func nodeExec(ctx context.Context, node string, stdin io.Reader, args ...string) (string, error) {
	if n := umlNode(node); n != nil {
		return n.Exec(ctx, stdin, args...)
	}
	da := []string{"exec"}
	if stdin != nil {
		da = append(da, "-i")
	}
	return command.DockerIn(ctx, stdin, append(append(da, node), args...)...)
}

// isLocalNode reports whether a node is a kind node container or a UML
// node of this host (commands can run on it through NodeExec).
func isLocalNode(ctx context.Context, node string) bool {
	if umlNode(node) != nil {
		return true
	}
	_, err := command.Docker(ctx, "inspect", "--type", "container", "--format", "{{.Name}}", node)
	return err == nil
}

// appArmorNodeRunning reports whether a cluster's UML node runs on this host.
func appArmorNodeRunning(cluster string) bool {
	n := umlNode(AppArmorNodeName(cluster))
	return n != nil && n.Running()
}

// saveAppArmorNodeConsoles copies the console logs of a cluster's UML nodes
// into dir (as <node>-console.log) and returns the files written.
func saveAppArmorNodeConsoles(cluster, dir string) []string {
	root, err := umlStateRoot()
	if err != nil {
		return nil
	}
	ns, _ := uml.Nodes(root, cluster)
	var out []string
	for _, n := range ns {
		b, err := os.ReadFile(n.Console())
		if err != nil {
			continue
		}
		f := filepath.Join(dir, n.Name+"-console.log")
		if os.WriteFile(f, b, 0o644) == nil {
			out = append(out, f)
		}
	}
	return out
}

// nodeNames lists the nodes of a skewproof cluster: its kind node
// containers and its User-Mode Linux nodes.
func nodeNames(ctx context.Context, name string) ([]string, error) {
	ns, err := kindProvider(nil).ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of %s: %w", name, err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.String())
	}
	if appArmorNodeRunning(name) {
		out = append(out, AppArmorNodeName(name))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cluster %s (see 'skewproof cluster list')", name)
	}
	return out, nil
}

// appArmorNodeKernel returns the User-Mode Linux kernel of AppArmor nodes,
// building it first when it is not cached (minutes, with progress lines).
func appArmorNodeKernel(ctx context.Context, p *progress.Progress) (string, error) {
	cache, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	if k := uml.CachedKernel(cache); k == "" {
		if err := uml.BuildReady(); err != nil {
			return "", err
		}
	}
	return uml.Kernel(ctx, cache, p.Step)
}
