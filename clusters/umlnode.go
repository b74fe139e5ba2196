package clusters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/uml"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/skew/release"
)

// AppArmorNodeName is the Kubernetes node name of a cluster's i-th
// User-Mode Linux node (from 0), named as kind names workers:
// <cluster>-uml-worker, <cluster>-uml-worker2, …
func AppArmorNodeName(cluster string, i int) string {
	if i == 0 {
		return cluster + "-uml-worker"
	}
	return fmt.Sprintf("%s-uml-worker%d", cluster, i+1)
}

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

// umlNodes are the AppArmor nodes of a cluster being brought up: their
// kernels start as soon as kind has made the cluster's Docker network, so
// they boot while kind makes the other nodes, and join once the control
// plane serves (joinAppArmorNodes).
type umlNodes struct {
	cfgs  []uml.Config
	done  chan struct{} // closed when every kernel has started, or failed to
	nodes []*uml.Node
	err   error
	stop  context.CancelFunc // ends the milestones and a wait for the network
}

// sweepDisks removes the AppArmor node disks no build can use again
// (uml.StaleDisks: their node image is gone from Docker, or their node
// files changed), and says which. It runs before disks are built and
// whenever node images are removed; a failure to sweep is said and does
// not stop what called it.
func sweepDisks(ctx context.Context, h command.Host) {
	p := h.Progress
	cache, err := cachedir.Resolve()
	if err != nil {
		return
	}
	stale, err := uml.StaleDisks(cache, func() ([]string, error) {
		out, err := h.Docker(ctx, "images", "--all", "--quiet", "--no-trunc")
		if err != nil {
			return nil, errors.New(command.ErrSummary(err.Error()))
		}
		return strings.Fields(out), nil
	})
	if err != nil {
		p.Step("AppArmor node disks: not swept (%v)", err)
		return
	}
	for _, d := range stale {
		if err := os.Remove(d); err != nil {
			p.Step("AppArmor node disk %s: not removed (%v)", filepath.Base(d), err)
			continue
		}
		p.Step("removed AppArmor node disk %s: its node image is gone (or its node files changed)", filepath.Base(d))
	}
}

// prepareAppArmorNodes finds (or builds, once) the UML kernel and each
// node's disk, before kind's create: one disk per node image, each node
// writing to its own copy-on-write file over it.
func prepareAppArmorNodes(ctx context.Context, h command.Host, o UpOptions, images map[noderuntime.Worker]string) ([]uml.Config, error) {
	p := h.Progress
	if len(o.AppArmorNodes) == 0 {
		return nil, nil
	}
	cache, err := cachedir.Resolve()
	if err != nil {
		return nil, err
	}
	kernel := o.UMLKernel
	if kernel == "" {
		if err := p.Timed("AppArmor node kernel", func() (err error) {
			kernel, err = uml.Kernel(ctx, cache, p.Step)
			return err
		}); err != nil {
			return nil, err
		}
	}
	sweepDisks(ctx, h)
	// One disk per node image, the missing ones built at the same time
	// (docker export and mkfs.ext4 of a 0.7-1 GB image each).
	var distinct []string
	for _, w := range o.AppArmorNodes {
		if !slices.Contains(distinct, images[w]) {
			distinct = append(distinct, images[w])
		}
	}
	built := make([]string, len(distinct))
	errs := make([]error, len(distinct))
	var wg sync.WaitGroup
	for i, image := range distinct {
		wg.Go(func() {
			imageID, err := h.Docker(ctx, "image", "inspect", "--format", "{{.Id}}", image)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = p.Timed("AppArmor node disk from "+image, func() (err error) {
				built[i], err = uml.Disk(ctx, cache, image, imageID, p.Step)
				return err
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The host's CPUs shared out: each node's virtual CPUs are host threads
	// (seccomp stubs), and more of them than the host has cores only adds
	// switching; one node on two cores gets two.
	cpus := max(1, runtime.NumCPU()/len(o.AppArmorNodes))
	var cfgs []uml.Config
	for i, w := range o.AppArmorNodes {
		cfgs = append(cfgs, uml.Config{
			Name: AppArmorNodeName(o.Name, i), Cluster: o.Name, Disk: built[slices.Index(distinct, images[w])], Kernel: kernel, Index: i, CPUs: cpus,
			Labels: runtimeLabels(ctx, h, images[w], map[string]string{nodefacts.KubeletVersionLabel: "v" + release.BareVersion(w.Kubelet), nodefacts.AppArmorKernelLabel: "true"}),
		})
	}
	return cfgs, nil
}

// startAppArmorNodes starts the kernels of cfgs once the cluster's Docker
// network exists (kind makes it first thing in its create). Wait on done.
func startAppArmorNodes(ctx context.Context, h command.Host, o UpOptions, cfgs []uml.Config) *umlNodes {
	b := &umlNodes{cfgs: cfgs, done: make(chan struct{})}
	ctx, b.stop = context.WithCancel(ctx)
	if len(cfgs) == 0 {
		close(b.done)
		return b
	}
	go func() {
		defer close(b.done)
		b.err = b.start(ctx, h, o)
	}()
	return b
}

func (b *umlNodes) start(ctx context.Context, h command.Host, o UpOptions) error {
	p := h.Progress
	root, err := umlStateRoot()
	if err != nil {
		return err
	}
	net := networkName(o.Name)
	var out string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		out, err = h.Docker(ctx, "network", "inspect", "--format", "{{json .}}", net)
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("waiting for kind to make network %s for the AppArmor nodes: %w", net, err)
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
	// Docker names a network's bridge br-<id> unless an option says.
	bridge := "br-" + nw.ID[:12]
	if bn := nw.Options["com.docker.network.bridge.name"]; bn != "" {
		bridge = bn
	}
	var subnet, gateway string
	for _, c := range nw.IPAM.Config {
		if strings.Contains(c.Subnet, ".") {
			subnet, gateway = c.Subnet, c.Gateway
		}
	}
	if subnet == "" || gateway == "" {
		return fmt.Errorf("network %s has no IPv4 subnet and gateway", net)
	}
	for _, cfg := range b.cfgs {
		cfg.Bridge, cfg.Subnet, cfg.Gateway = bridge, subnet, gateway
		p.Step("booting AppArmor node %s: User-Mode Linux (%s, %d CPUs), kubelet %s, on %s", cfg.Name, cfg.Kernel, min(cfg.CPUs, uml.Features(cfg.Kernel).CPUs()), cfg.Labels[nodefacts.KubeletVersionLabel], cfg.Bridge)
		n, err := uml.Boot(ctx, root, cfg)
		if err != nil {
			return err
		}
		b.nodes = append(b.nodes, n)
		go n.Milestones(ctx, p.Step)
	}
	return nil
}

// wait waits until every kernel has started (or failed to) and returns
// the error of the start.
func (b *umlNodes) wait() error {
	<-b.done
	return b.err
}

// remove removes the nodes this bring-up started.
func (b *umlNodes) remove() {
	for _, n := range b.nodes {
		_ = n.Remove()
	}
}

// joinAppArmorNodes joins the started nodes to the cluster (a bootstrap
// token from the control plane; kubeadm join on each node at once), waits
// until each has registered with a podCIDR and routes pod traffic between
// them and the kind nodes. The caller waits for Ready. On error the console
// logs are kept (o.ArtifactsDir) and the caller removes the cluster.
func joinAppArmorNodes(ctx context.Context, h command.Host, o UpOptions, b *umlNodes, cs kubernetes.Interface, infos []NodeInfo) (err error) {
	p := h.Progress
	defer b.stop()
	if err := b.wait(); err != nil {
		return err
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			for _, n := range b.nodes {
				p.Step("AppArmor node %s console (end):\n%s", n.Name, n.ConsoleTail(25))
			}
			if o.ArtifactsDir != "" {
				for _, f := range saveAppArmorNodeConsoles(o.Name, o.ArtifactsDir) {
					p.Step("console log kept: %s", f)
				}
			}
		}
	}()
	var j uml.JoinConfig
	for _, i := range infos {
		if i.Role == "control-plane" {
			j.ControlPlaneName, j.ControlPlaneIP = i.Name, i.InternalIP
		}
	}
	if j.Token, err = h.Docker(ctx, "exec", j.ControlPlaneName, "kubeadm", "token", "create", "--ttl", "2h"); err != nil {
		return fmt.Errorf("a bootstrap token for the AppArmor nodes: %w", err)
	}
	start := time.Now()
	cidrs := make([]string, len(b.nodes))
	errs := make([]error, len(b.nodes))
	var wg sync.WaitGroup
	for k, n := range b.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cidrs[k], errs[k] = joinAppArmorNode(ctx, o, n, j, cs)
			if errs[k] == nil {
				p.Step("AppArmor node %s registered %.0fs after the control plane served, pod CIDR %s", n.Name, time.Since(start).Seconds(), cidrs[k])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return routeAppArmorNodes(ctx, h, b.nodes, cidrs, infos)
}

// joinAppArmorNode joins one node (joinAppArmorNodes) and returns its
// podCIDR.
func joinAppArmorNode(ctx context.Context, o UpOptions, n *uml.Node, j uml.JoinConfig, cs kubernetes.Interface) (string, error) {
	jctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()
	if err := n.Join(jctx, j); err != nil {
		return "", fmt.Errorf("AppArmor node %s did not join: %w", n.Name, err)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("AppArmor node %s joined but is not in the API: %w", n.Name, err)
	}
	if node.Spec.PodCIDR == "" {
		return "", fmt.Errorf("AppArmor node %s joined without a pod CIDR", n.Name)
	}
	return node.Spec.PodCIDR, nil
}

// routeAppArmorNodes routes the pod CIDRs of the UML nodes (cidrs[i] is
// nodes[i]'s) from every kind node and every other UML node, and writes each
// UML node's CNI configuration (cniScript) and routes the kind nodes' pod
// CIDRs from it: one command per node, all nodes at once.
func routeAppArmorNodes(ctx context.Context, h command.Host, nodes []*uml.Node, cidrs []string, infos []NodeInfo) error {
	type route struct{ cidr, via string }
	var all, umlRoutes []route
	for _, i := range infos {
		if i.PodCIDR != "" {
			all = append(all, route{i.PodCIDR, i.InternalIP})
		}
	}
	for k, n := range nodes {
		r := route{cidrs[k], strings.Split(n.Address, "/")[0]}
		all, umlRoutes = append(all, r), append(umlRoutes, r)
	}
	script := func(rs []route, except string) string {
		var b strings.Builder
		for _, r := range rs {
			if r.cidr != except {
				fmt.Fprintf(&b, "ip route replace %s via %s\n", r.cidr, r.via)
			}
		}
		return b.String()
	}
	errs := make([]error, len(infos)+len(nodes))
	var wg sync.WaitGroup
	for k, i := range infos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.Docker(ctx, "exec", i.Name, "sh", "-c", script(umlRoutes, "")); err != nil {
				errs[k] = fmt.Errorf("routing the AppArmor nodes' pod CIDRs on %s: %w", i.Name, err)
			}
		}()
	}
	for k, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := n.Exec(ctx, nil, "sh", "-c", cniScript(cidrs[k])+script(all, cidrs[k])); err != nil {
				errs[len(infos)+k] = fmt.Errorf("configuring pod networking on %s: %w", n.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// umlNodesOf are the UML nodes with state on this host, running or not, of
// one cluster ("": of every cluster).
func umlNodesOf(cluster string) ([]*uml.Node, error) {
	root, err := umlStateRoot()
	if err != nil {
		return nil, err
	}
	return uml.Nodes(root, cluster)
}

// removeAppArmorNodes removes a cluster's UML nodes (process, tap device,
// state directory).
func removeAppArmorNodes(cluster string) error {
	ns, err := umlNodesOf(cluster)
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
	ns, _ := umlNodesOf("")
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
func nodeExec(ctx context.Context, h command.Host, node string, stdin io.Reader, args ...string) (string, error) {
	if n := umlNode(node); n != nil {
		return n.Exec(ctx, stdin, args...)
	}
	da := []string{"exec"}
	if stdin != nil {
		da = append(da, "-i")
	}
	return h.DockerIn(ctx, stdin, append(append(da, node), args...)...)
}

// isLocalNode reports whether a node is a kind node container or a UML
// node of this host (commands can run on it through NodeExec).
func isLocalNode(ctx context.Context, h command.Host, node string) bool {
	if umlNode(node) != nil {
		return true
	}
	_, err := h.Docker(ctx, "inspect", "--type", "container", "--format", "{{.Name}}", node)
	return err == nil
}

// appArmorNodeRunning reports whether a UML node of a cluster runs on this
// host.
func appArmorNodeRunning(cluster string) bool {
	return len(runningAppArmorNodes(cluster)) > 0
}

// runningAppArmorNodes are the names of a cluster's UML nodes that run on
// this host.
func runningAppArmorNodes(cluster string) []string {
	ns, _ := umlNodesOf(cluster)
	var out []string
	for _, n := range ns {
		if n.Running() {
			out = append(out, n.Name)
		}
	}
	return out
}

// saveAppArmorNodeConsoles copies the console logs of a cluster's UML nodes
// into dir (as <node>-console.log) and returns, for each file written, its
// path and what the kernel said of tasks it found hung (hungTasks).
func saveAppArmorNodeConsoles(cluster, dir string) []string {
	ns, _ := umlNodesOf(cluster)
	var out []string
	for _, n := range ns {
		b, err := os.ReadFile(n.Console())
		if err != nil {
			continue
		}
		f := filepath.Join(dir, n.Name+"-console.log")
		if os.WriteFile(f, b, 0o644) != nil {
			continue
		}
		if hung := hungTasks(b); len(hung) > 0 {
			f += fmt.Sprintf(" (the kernel of %s found tasks blocked for over a minute: %s; docs/apparmor-node.md, Limits)", n.Name, strings.Join(hung, ", "))
		}
		out = append(out, f)
	}
	return out
}

// hungTasks lists the tasks a kernel console reports as hung ("INFO: task
// NAME:PID blocked[ in I/O wait] for more than N seconds."), each once,
// in order.
func hungTasks(console []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(console), "\n") {
		_, rest, ok := strings.Cut(l, "INFO: task ")
		if !ok || !strings.Contains(rest, " blocked") || !strings.Contains(rest, " for more than ") {
			continue
		}
		task, _, _ := strings.Cut(rest, " ")
		if i := strings.LastIndex(task, ":"); i > 0 {
			task = task[:i]
		}
		if !seen[task] {
			seen[task] = true
			out = append(out, task)
		}
	}
	return out
}

// nodeNames lists the nodes of a skewproof cluster: its kind node
// containers and its User-Mode Linux nodes.
func nodeNames(ctx context.Context, h command.Host, name string) ([]string, error) {
	ns, err := kindProvider(h.Progress).ListNodes(name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of %s: %w", name, err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.String())
	}
	out = append(out, runningAppArmorNodes(name)...)
	if len(out) == 0 {
		return nil, fmt.Errorf("no cluster %s (see 'skewproof cluster list')", name)
	}
	return out, nil
}

// appArmorNodeKernel returns the User-Mode Linux kernel of AppArmor nodes,
// building it first when it is not cached (minutes, with progress lines).
func appArmorNodeKernel(ctx context.Context, h command.Host) (string, error) {
	p := h.Progress
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
