package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// KubeletVersionLabel is set on every node to the version of its kubelet.
const KubeletVersionLabel = "skewproof.io/kubelet-version"

// clusterLabel marks the Docker objects skewproof owns besides kind's.
const clusterLabel = "io.skewproof.cluster"

// UpOptions describes a cluster: one control-plane node at the apiserver
// version and one worker per kubelet version.
type UpOptions struct {
	Name       string
	APIServer  string   // e.g. 1.37.2
	Kubelets   []string // one worker each
	Kubeconfig string   // default: DefaultKubeconfig(Name)
	// NodeImages maps a kubelet version ("" for the control plane) to a
	// prebuilt node image; versions not in the map are built offline.
	NodeImages map[string]string
	// CgroupV1 patches the kubelet configuration (failCgroupV1: false) so
	// kubelets from v1.35 on start on a cgroup v1 host.
	CgroupV1 bool
	// FeatureGates are set on every component of every node (kind's
	// cluster-wide featureGates: kube-apiserver, controller-manager,
	// scheduler and kubelets), e.g. AppArmor=false on a v1.30 cluster.
	FeatureGates map[string]bool
	// AppArmorHost makes the host's AppArmor visible to the nodes' runtimes
	// (nodeAppArmorMounts); set it when the host kernel has AppArmor.
	AppArmorHost bool
	// AppArmorNode, when set, is the kubelet version of one more worker
	// whose kernel is User-Mode Linux with AppArmor enabled (the worker
	// image of that version on a UML kernel, joined with kubeadm), for hosts
	// whose own kernel has no AppArmor.
	AppArmorNode string
	// ArtifactsDir, when set, keeps the console log of an AppArmor node
	// whose bring-up fails.
	ArtifactsDir string
	// ReadyTimeout bounds the wait for nodes and kube-system pods.
	ReadyTimeout time.Duration
	Progress     *Progress
}

// Cluster is a running cluster.
type Cluster struct {
	Name       string
	Kubeconfig string
	Nodes      []NodeInfo
}

// NodeInfo is one node as the API reports it.
type NodeInfo struct {
	Name           string
	Role           string // control-plane or worker
	KubeletVersion string
	PodCIDR        string
	InternalIP     string
}

// DefaultKubeconfig is where a cluster's kubeconfig goes unless told.
func DefaultKubeconfig(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".kube", "skewproof-"+name+".yaml")
}

// NetworkName is the Docker network of a cluster (one per cluster, removed
// with it).
func NetworkName(name string) string { return "skewproof-" + name }

type kindLogger struct{ p *Progress }

func (l kindLogger) Warn(m string)                      {}
func (l kindLogger) Warnf(f string, a ...any)           {}
func (l kindLogger) Error(m string)                     { l.p.Step("kind: %s", m) }
func (l kindLogger) Errorf(f string, a ...any)          { l.p.Step("kind: "+f, a...) }
func (l kindLogger) V(kindlog.Level) kindlog.InfoLogger { return kindInfo{l.p} }

type kindInfo struct{ p *Progress }

func (i kindInfo) Info(m string)            {}
func (i kindInfo) Infof(f string, a ...any) {}
func (i kindInfo) Enabled() bool            { return false }

func provider(p *Progress) *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindLogger{p}))
}

// Up builds what is missing, creates the cluster through kind's Go packages,
// brings pod networking up and waits until every node is Ready and every
// kube-system pod is ready. On error or interrupt it deletes what it created.
func Up(ctx context.Context, o UpOptions) (*Cluster, error) {
	p := o.Progress
	if o.Kubeconfig == "" {
		o.Kubeconfig = DefaultKubeconfig(o.Name)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	existing, err := List(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range existing {
		if n == o.Name {
			return nil, fmt.Errorf("cluster %q already exists; delete it with 'skewproof cluster down --name %s' or choose another --name", o.Name, o.Name)
		}
	}

	if o.AppArmorNode != "" {
		if err := AppArmorNodeReady(); err != nil {
			return nil, err
		}
	}

	// Node images: the control plane, then one per distinct kubelet version.
	images := map[string]string{}
	need := append([]string{""}, o.Kubelets...)
	if o.AppArmorNode != "" {
		need = append(need, o.AppArmorNode)
	}
	for _, kl := range need {
		if _, done := images[kl]; done {
			continue
		}
		if ref, ok := o.NodeImages[kl]; ok {
			if !imageExists(ctx, ref) {
				return nil, fmt.Errorf("node image %s not found in the local Docker daemon; load it first (skewproof never pulls)", ref)
			}
			images[kl] = ref
			continue
		}
		spec := NodeImageSpec{ControlPlane: o.APIServer, Kubelet: kl}
		ref, err := BuildNodeImage(ctx, p, spec)
		if err != nil {
			return nil, err
		}
		images[kl] = ref
	}

	cfg := &v1alpha4.Cluster{}
	v1alpha4.SetDefaultsCluster(cfg)
	cfg.Name = o.Name
	cfg.Networking.APIServerAddress = "127.0.0.1"
	cfg.Networking.DisableDefaultCNI = true
	cpVersion := "v" + trimV(o.APIServer)
	cfg.Nodes = []v1alpha4.Node{{
		Role:   v1alpha4.ControlPlaneRole,
		Image:  images[""],
		Labels: map[string]string{KubeletVersionLabel: cpVersion},
	}}
	for _, kl := range o.Kubelets {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{
			Role:   v1alpha4.WorkerRole,
			Image:  images[kl],
			Labels: map[string]string{KubeletVersionLabel: "v" + trimV(kl)},
		})
	}
	if len(o.FeatureGates) > 0 {
		cfg.FeatureGates = o.FeatureGates
	}
	var dropIn string
	if o.AppArmorHost {
		var err error
		if dropIn, err = writeContainerdAppArmorDropIn(); err != nil {
			return nil, err
		}
	}
	for i := range cfg.Nodes {
		if o.AppArmorHost {
			cfg.Nodes[i].ExtraMounts = append(cfg.Nodes[i].ExtraMounts, nodeAppArmorMounts(dropIn)...)
		}
		v1alpha4.SetDefaultsNode(&cfg.Nodes[i])
	}
	if o.CgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n")
	}
	if err := os.MkdirAll(filepath.Dir(o.Kubeconfig), 0o700); err != nil {
		return nil, err
	}

	os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", NetworkName(o.Name))
	prov := provider(p)
	cleanup := func(reason string) {
		p.Step("%s: deleting cluster %s", reason, o.Name)
		if err := Down(context.Background(), o.Name, o.Kubeconfig, p); err != nil {
			p.Step("cleanup of %s: %v", o.Name, err)
		}
	}
	created := make(chan error, 1)
	p.Step("creating cluster %s: control plane %s, kubelets %s", o.Name, cpVersion, strings.Join(o.Kubelets, ","))
	start := time.Now()
	go func() {
		created <- prov.Create(o.Name,
			cluster.CreateWithV1Alpha4Config(cfg),
			cluster.CreateWithKubeconfigPath(o.Kubeconfig),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false),
			cluster.CreateWithRetain(false))
	}()
	select {
	case err := <-created:
		if err != nil {
			cleanup("create failed")
			return nil, fmt.Errorf("creating cluster %s: %v", o.Name, flattenKindError(err))
		}
	case <-ctx.Done():
		// Remove the nodes now, so kind's create fails fast, then again once
		// it has returned, in case it made more meanwhile.
		cleanup("interrupted")
		select {
		case <-created:
		case <-time.After(2 * time.Minute):
		}
		cleanup("interrupted")
		return nil, ctx.Err()
	}
	p.Step("kind create done in %.1fs", time.Since(start).Seconds())
	os.Chmod(o.Kubeconfig, 0o600)

	c, err := finishUp(ctx, prov, o, images[o.AppArmorNode])
	if err != nil {
		reason := "bring-up failed"
		if ctx.Err() != nil {
			reason = "interrupted"
		}
		cleanup(reason)
		return nil, err
	}
	return c, nil
}

func flattenKindError(err error) string {
	s := err.Error()
	if i := strings.Index(s, "\n"); i > 0 {
		s = s[:i]
	}
	return s
}

func finishUp(ctx context.Context, prov *cluster.Provider, o UpOptions, appArmorImage string) (*Cluster, error) {
	p := o.Progress
	cs, err := Clientset(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	want := 1 + len(o.Kubelets)
	var infos []NodeInfo
	if err := p.Timed("pod networking (CNI config from each node's podCIDR)", func() error {
		infos, err = waitPodCIDRs(ctx, cs, want, 2*time.Minute)
		if err != nil {
			return err
		}
		kn, err := prov.ListNodes(o.Name)
		if err != nil {
			return err
		}
		return setupNetworking(kn, infos)
	}); err != nil {
		return nil, err
	}
	if o.AppArmorNode != "" {
		if err := p.Timed("AppArmor node (User-Mode Linux) joined", func() error {
			return bootAppArmorNode(ctx, o, appArmorImage, cs, infos)
		}); err != nil {
			return nil, err
		}
		want++
	}
	if err := p.Timed("waiting for nodes Ready and kube-system pods ready", func() error {
		return WaitReady(ctx, cs, want, o.ReadyTimeout)
	}); err != nil {
		return nil, err
	}
	infos, err = nodeInfos(ctx, cs)
	if err != nil {
		return nil, err
	}
	return &Cluster{Name: o.Name, Kubeconfig: o.Kubeconfig, Nodes: infos}, nil
}

// Clientset returns a client for the cluster of a kubeconfig.
func Clientset(kubeconfig string) (*kubernetes.Clientset, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return kubernetes.NewForConfig(rc)
}

func nodeInfos(ctx context.Context, cs kubernetes.Interface) ([]NodeInfo, error) {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []NodeInfo
	for _, n := range nl.Items {
		ni := NodeInfo{Name: n.Name, Role: "worker", KubeletVersion: n.Status.NodeInfo.KubeletVersion, PodCIDR: n.Spec.PodCIDR}
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			ni.Role = "control-plane"
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !strings.Contains(a.Address, ":") {
				ni.InternalIP = a.Address
			}
		}
		out = append(out, ni)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func waitPodCIDRs(ctx context.Context, cs kubernetes.Interface, want int, timeout time.Duration) ([]NodeInfo, error) {
	deadline := time.Now().Add(timeout)
	for {
		infos, err := nodeInfos(ctx, cs)
		ok := err == nil && len(infos) == want
		for _, n := range infos {
			if n.PodCIDR == "" || n.InternalIP == "" {
				ok = false
			}
		}
		if ok {
			return infos, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("nodes without podCIDR after %s (have %d of %d nodes): %v", timeout, len(infos), want, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// setupNetworking writes a ptp + host-local CNI configuration for the node's
// podCIDR on every node and routes the other nodes' pod CIDRs to them.
func setupNetworking(kn []nodes.Node, infos []NodeInfo) error {
	byName := map[string]NodeInfo{}
	for _, i := range infos {
		byName[i.Name] = i
	}
	for _, n := range kn {
		me, ok := byName[n.String()]
		if !ok {
			continue
		}
		var script strings.Builder
		fmt.Fprintf(&script, "set -e\nmkdir -p /etc/cni/net.d\ncat > /etc/cni/net.d/10-skewproof.conflist.tmp <<'EOF'\n%sEOF\nmv /etc/cni/net.d/10-skewproof.conflist.tmp /etc/cni/net.d/10-skewproof.conflist\n", cniConfig(me.PodCIDR))
		for _, other := range infos {
			if other.Name != me.Name {
				fmt.Fprintf(&script, "ip route replace %s via %s\n", other.PodCIDR, other.InternalIP)
			}
		}
		var out strings.Builder
		if err := n.Command("sh", "-c", script.String()).SetStdout(&out).SetStderr(&out).Run(); err != nil {
			return fmt.Errorf("configuring pod networking on %s: %v: %s", n.String(), err, out.String())
		}
	}
	return nil
}

func cniConfig(podCIDR string) string {
	return `{
  "cniVersion": "0.4.0",
  "name": "skewproof",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "ranges": [[{"subnet": "` + podCIDR + `"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`
}

// WaitReady waits until want nodes are Ready and every kube-system pod is
// ready (or has succeeded).
func WaitReady(ctx context.Context, cs kubernetes.Interface, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var problem string
	for {
		problem = readiness(ctx, cs, want)
		if problem == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ready after %s: %s", timeout, problem)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func readiness(ctx context.Context, cs kubernetes.Interface, want int) string {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	if len(nl.Items) != want {
		return fmt.Sprintf("%d of %d nodes registered", len(nl.Items), want)
	}
	var bad []string
	for _, n := range nl.Items {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			bad = append(bad, "node "+n.Name+" not Ready")
		}
	}
	pl, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	if len(pl.Items) == 0 {
		return "no kube-system pods yet"
	}
	for _, pod := range pl.Items {
		if pod.Status.Phase == corev1.PodSucceeded {
			continue
		}
		ready := false
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			why := string(pod.Status.Phase)
			for _, s := range pod.Status.ContainerStatuses {
				if s.State.Waiting != nil {
					why = s.State.Waiting.Reason + ": " + s.State.Waiting.Message
				}
			}
			bad = append(bad, fmt.Sprintf("pod %s not ready (%s)", pod.Name, why))
		}
	}
	return strings.Join(bad, "; ")
}

// Down deletes a cluster: its nodes (through kind), its Docker network and
// its default kubeconfig file. Deleting a cluster that does not exist is not
// an error.
func Down(ctx context.Context, name, kubeconfig string, p *Progress) error {
	var errs []error
	if kubeconfig == "" {
		kubeconfig = DefaultKubeconfig(name)
	}
	os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", NetworkName(name))
	if err := removeAppArmorNodes(name); err != nil {
		errs = append(errs, fmt.Errorf("removing the AppArmor node of %s: %w", name, err))
	}
	if err := provider(p).Delete(name, kubeconfig); err != nil {
		errs = append(errs, fmt.Errorf("deleting nodes of %s: %w", name, err))
	}
	if out, err := docker(ctx, "network", "ls", "-q", "--filter", "name=^"+NetworkName(name)+"$"); err == nil && out != "" {
		if _, err := docker(ctx, "network", "rm", NetworkName(name)); err != nil {
			errs = append(errs, err)
		}
	}
	if kubeconfig == DefaultKubeconfig(name) {
		if err := os.Remove(kubeconfig); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// List returns the names of the clusters that exist (kind clusters on a
// skewproof network or with skewproof node images).
func List(ctx context.Context) ([]string, error) {
	if _, err := docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return nil, DockerUnavailableError(err)
	}
	out, err := docker(ctx, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", `{{.Label "io.x-k8s.kind.cluster"}} {{.Networks}}`)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 1 || seen[f[0]] {
			continue
		}
		if len(f) > 1 && !strings.Contains(f[1], NetworkName(f[0])) {
			continue // a kind cluster that is not ours
		}
		seen[f[0]] = true
		names = append(names, f[0])
	}
	for _, c := range appArmorNodeClusters() {
		if !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	sort.Strings(names)
	return names, nil
}

// DockerUnavailableError is the one-line error for a Docker daemon that does
// not answer.
func DockerUnavailableError(err error) error {
	return fmt.Errorf("the Docker daemon is not reachable (%s); start it, e.g. 'sudo hack/setup-host.sh'", firstLine(err.Error()))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, ": "); i > 0 && len(s)-i > 10 {
		s = s[i+2:]
	}
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
