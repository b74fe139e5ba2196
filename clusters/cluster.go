// Up: a cluster of one control plane at the API server's version and one
// worker per kubelet version, from node images built offline, created
// through kind's Go packages and brought to readiness (network.go,
// ready.go); down.go and list.go delete and find clusters.

package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// UpOptions describes a cluster: one control-plane node at the apiserver
// version and one worker per kubelet version.
type UpOptions struct {
	Name      string
	APIServer string   // e.g. 1.37.2
	Kubelets  []string // one worker each
	// Runtimes[i] is the container runtime of the worker of Kubelets[i];
	// missing entries (or nil) are the default.
	Runtimes []noderuntime.Runtime
	// OCIRuntimes are OCI runtimes the user provides (name → path on this
	// host), which Runtimes may name.
	OCIRuntimes map[string]string
	Kubeconfig  string // default: defaultKubeconfig(Name)
	// NodeImages maps a kubelet version ("" for the control plane) to a
	// prebuilt node image; versions not in the map are built offline.
	NodeImages map[string]string
	// FeatureGates are set on every component of every node (kind's
	// cluster-wide featureGates: kube-apiserver, controller-manager,
	// scheduler and kubelets), e.g. AppArmor=false on a v1.30 cluster.
	FeatureGates map[string]bool
	// AppArmorNodes are more workers, each a kubelet version and its
	// container runtime, whose kernel is User-Mode Linux with AppArmor
	// enabled (the worker image of that version on a UML kernel, joined
	// with kubeadm), for hosts whose own kernel has no AppArmor; named
	// AppArmorNodeName(Name, i). A CRI-O node joins like a containerd one
	// (internal/nodeimage/crio.go).
	AppArmorNodes []noderuntime.Worker
	// UMLKernel is the User-Mode Linux kernel of the AppArmor nodes; ""
	// builds (once) and uses skewproof's own.
	UMLKernel string
	// ArtifactsDir, when set, keeps the console logs of the AppArmor nodes
	// and the logs of the kube-system pods not ready of a cluster whose
	// bring-up fails (before it is deleted).
	ArtifactsDir string
	// Temporary: the caller deletes the cluster when it ends (a run without
	// --keep). Should it be killed first, ListOwned reports the cluster as
	// left behind, with the command that removes it.
	Temporary bool
	// ReadyTimeout bounds the wait for nodes and kube-system pods.
	ReadyTimeout time.Duration
}

// Cluster is a running cluster.
type Cluster struct {
	Name       string
	Kubeconfig string
	Nodes      []NodeInfo
	// Images are the node images its nodes run (Provider.RemoveNodeImages
	// removes them once the cluster is gone).
	Images []string
}

// NodeInfo is one node as the API reports it.
type NodeInfo struct {
	Name           string
	Role           string // control-plane or worker
	KubeletVersion string
	PodCIDR        string
	InternalIP     string
}

// controllerManagerQPS is kube-controller-manager's client rate limit in
// the clusters skewproof makes (--kube-api-qps; the burst is twice it).
// Its default, 20 requests/s, paces the garbage collector: the profiles
// scale spec deletes three profiles with 1,500 node statuses, whose
// removal took 75-95 s at 20/s. The rate changes how fast the controllers
// act, not what they do; nothing the specs judge depends on it. A run
// against an existing cluster (--kubeconfig) keeps that cluster's rate.
const controllerManagerQPS = 100

// controllerManagerPatch sets controllerManagerQPS through kubeadm's
// ClusterConfiguration. Without an apiVersion it applies to kubeadm's
// v1beta3 (extraArgs a map) and v1beta4 (a list; kind converts the map).
//
// It also has kube-controller-manager retry for its leader lease every
// 500 ms instead of 2 s. The lease is refused until the API server has
// bootstrapped its RBAC roles (1-3 s after it serves), and only the leader
// runs the bootstrap signer, which signs the cluster-info ConfigMap that
// `kubeadm join` waits for, retrying every 5 s (kubeadm's
// DiscoveryRetryInterval; cmd/kubeadm/app/discovery/token/token.go): a
// lease taken a 2 s period late made the workers' joins miss the signature
// and wait 5-10 s. One control plane, so no other candidate contends for
// the lease; how the controllers behave once it is held does not change.
var controllerManagerPatch = fmt.Sprintf(`kind: ClusterConfiguration
controllerManager:
  extraArgs:
    kube-api-qps: "%d"
    kube-api-burst: "%d"
    leader-elect-retry-period: "500ms"
`, controllerManagerQPS, 2*controllerManagerQPS)

// noCoreDNSPatch skips kubeadm's CoreDNS add-on: no spec resolves a name
// (the agent, the suites and the conformance image reach the API server by
// the address in their kubeconfig or in KUBERNETES_SERVICE_HOST), so cluster
// DNS cost a CoreDNS build from source on every fresh machine (about 4
// minutes on two cores) and, in every run, the wait for its pods to become
// ready before the suites could start. kind's own InitConfiguration skips
// preflight (kind loads the images itself); a merge patch replaces the list,
// so preflight is named again.
const noCoreDNSPatch = "kind: InitConfiguration\nskipPhases:\n- preflight\n- addon/coredns\n"

// networkName is the Docker network of a cluster (one per cluster, removed
// with it).
func networkName(name string) string { return "skewproof-" + name }

// kindLogger passes kind's errors to the progress; its warnings are dropped,
// except that the one saying kind has read the network of the nodes calls
// networkRead (kindnetwork.go).
type kindLogger struct {
	p           *progress.Progress
	networkRead func()
}

func (l kindLogger) Warn(m string) {
	if l.networkRead != nil && isNetworkRead(m) {
		l.networkRead()
	}
}
func (l kindLogger) Warnf(f string, a ...any)           { l.Warn(fmt.Sprintf(f, a...)) }
func (l kindLogger) Error(m string)                     { l.p.Step("kind: %s", m) }
func (l kindLogger) Errorf(f string, a ...any)          { l.p.Step("kind: "+f, a...) }
func (l kindLogger) V(kindlog.Level) kindlog.InfoLogger { return kindInfo{l.p} }

type kindInfo struct{ p *progress.Progress }

func (i kindInfo) Info(m string)            {}
func (i kindInfo) Infof(f string, a ...any) {}
func (i kindInfo) Enabled() bool            { return false }

func kindProvider(p *progress.Progress) *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindLogger{p: p}))
}

// ExistsError says a cluster of that name exists already (another run's, or
// one kept): nothing of it may be deleted by the run that was refused.
type ExistsError struct{ Name, State string }

func (e ExistsError) Error() string {
	if strings.HasPrefix(e.State, "being made") {
		return fmt.Sprintf("cluster %q is %s; choose another --name", e.Name, e.State)
	}
	state := ""
	if e.State != "" {
		state = " (" + strings.SplitN(e.State, ";", 2)[0] + ")"
	}
	return fmt.Sprintf("cluster %q already exists%s; delete it with 'skewproof cluster down --name %s' or choose another --name", e.Name, state, e.Name)
}

// nodeImages builds (or finds) the node images of the cluster, by worker:
// the control plane's (noderuntime.Worker{}), then one per distinct worker (kubelet
// version and runtime), the AppArmor node's included; a prebuilt image
// (--node-image) must be in the local Docker daemon.
func nodeImages(ctx context.Context, h command.Host, o UpOptions) (map[noderuntime.Worker]string, error) {
	images := map[noderuntime.Worker]string{}
	need := append(append([]noderuntime.Worker{{}}, o.workers()...), o.AppArmorNodes...)
	for _, w := range need {
		if _, done := images[w]; done {
			continue
		}
		key := w.Kubelet // --node-image VERSION=REF; VERSION@CRI+OCI=REF for another runtime
		if !w.Runtime.IsDefault() {
			key = w.String()
		}
		if ref, ok := o.NodeImages[key]; ok {
			if !h.ImageExists(ctx, ref) {
				return nil, fmt.Errorf("node image %s not found in the local Docker daemon; load it first (skewproof never pulls)", ref)
			}
			images[w] = ref
			continue
		}
		spec := nodeimage.Spec{ControlPlane: o.APIServer, Kubelet: w.Kubelet, Runtime: w.Runtime, OCIRuntimes: o.OCIRuntimes}
		ref, err := nodeimage.Build(ctx, h, spec)
		if err != nil {
			return nil, err
		}
		images[w] = ref
	}

	return images, nil
}

// kindConfig is kind's configuration of the cluster: a control plane and
// the workers on their node images, with their runtime labels, the
// feature gates, the kubeadm patches, and what the facts of the host
// (nodefacts.Host) ask for.
func kindConfig(ctx context.Context, h command.Host, o UpOptions, images map[noderuntime.Worker]string, host skew.HostFacts) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{}
	v1alpha4.SetDefaultsCluster(cfg)
	cfg.Name = o.Name
	cfg.Networking.APIServerAddress = "127.0.0.1"
	cfg.Networking.DisableDefaultCNI = true
	cpVersion := "v" + release.BareVersion(o.APIServer)
	cfg.Nodes = []v1alpha4.Node{{
		Role:   v1alpha4.ControlPlaneRole,
		Image:  images[noderuntime.Worker{}],
		Labels: runtimeLabels(ctx, h, images[noderuntime.Worker{}], map[string]string{nodefacts.KubeletVersionLabel: cpVersion}),
	}}
	for _, w := range o.workers() {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{
			Role:   v1alpha4.WorkerRole,
			Image:  images[w],
			Labels: runtimeLabels(ctx, h, images[w], map[string]string{nodefacts.KubeletVersionLabel: "v" + release.BareVersion(w.Kubelet)}),
		})
	}
	if len(o.FeatureGates) > 0 {
		cfg.FeatureGates = o.FeatureGates
	}
	// The host's facts: on a cgroup v1 host the kubelets are configured
	// with failCgroupV1: false (kubelets from v1.35 on refuse cgroup v1
	// otherwise; kubeadmPatches); on a host with AppArmor the nodes'
	// runtimes see it (nodeAppArmorMounts).
	var dropIn string
	if host.AppArmor {
		var err error
		if dropIn, err = writeContainerdAppArmorDropIn(); err != nil {
			return nil, err
		}
	}
	configPatches, mountPatches, err := kubeadmPatches(o.APIServer, host.CgroupVersion, o.FeatureGates)
	if err != nil {
		return nil, err
	}
	if mountPatches {
		patches, err := writeKubeadmPatches()
		if err != nil {
			return nil, err
		}
		cfg.Nodes[0].ExtraMounts = append(cfg.Nodes[0].ExtraMounts, kubeadmPatchesMount(patches))
	}
	for i := range cfg.Nodes {
		if host.AppArmor {
			cfg.Nodes[i].ExtraMounts = append(cfg.Nodes[i].ExtraMounts, nodeAppArmorMounts(dropIn)...)
		}
		v1alpha4.SetDefaultsNode(&cfg.Nodes[i])
	}
	cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, configPatches...)
	return cfg, nil
}

// up builds what is missing, creates the cluster through kind's Go packages,
// brings pod networking up and waits until every node is Ready and every
// kube-system pod is ready. On error or interrupt it deletes what it created.
func up(ctx context.Context, h command.Host, o UpOptions) (_ *Cluster, err error) {
	p := h.Progress
	if o.Kubeconfig == "" {
		o.Kubeconfig = defaultKubeconfig(o.Name)
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	if err := claim(ctx, h, o.Name, o.Temporary); err != nil {
		return nil, err
	}
	created := false
	defer func() {
		if err != nil && !created {
			removeOwner(o.Name)
		}
	}()

	if len(o.AppArmorNodes) > 0 {
		if err := appArmorNodeReady(o.UMLKernel); err != nil {
			return nil, err
		}
	}

	images, err := nodeImages(ctx, h, o)
	if err != nil {
		return nil, err
	}
	umlCfgs, err := prepareAppArmorNodes(ctx, h, o, images)
	if err != nil {
		return nil, err
	}
	cfg, err := kindConfig(ctx, h, o, images, nodefacts.Host())
	if err != nil {
		return nil, err
	}
	cpVersion := "v" + release.BareVersion(o.APIServer)
	if err := os.MkdirAll(filepath.Dir(o.Kubeconfig), 0o700); err != nil {
		return nil, err
	}

	prov := kindProvider(p)
	cleanup := func(reason string) {
		p.Step("%s: deleting cluster %s", reason, o.Name)
		if err := down(context.Background(), h, o.Name, o.Kubeconfig); err != nil {
			p.Step("cleanup of %s: %v", o.Name, err)
		}
	}
	created = true // from here on, Down removes what exists and the owner record
	done := make(chan error, 1)
	p.Step("creating cluster %s: control plane %s, kubelets %s", o.Name, cpVersion, strings.Join(o.workerNames(), ","))
	start := time.Now()
	var networkLock time.Duration
	go func() {
		held, err := createNodes(p, o, cfg)
		networkLock = held
		done <- err
	}()
	// The AppArmor nodes boot while kind makes the others.
	umlBoot := startAppArmorNodes(ctx, h, o, umlCfgs)
	select {
	case err := <-done:
		if err != nil {
			umlBoot.stop()
			_ = umlBoot.wait()
			if strings.Contains(err.Error(), "already exist for a cluster with the name") {
				// Made meanwhile outside skewproof (kind's CLI): its nodes
				// are not ours; the AppArmor nodes this run started are.
				umlBoot.remove()
				created = false
				return nil, ExistsError{Name: o.Name}
			}
			cleanup("create failed")
			return nil, fmt.Errorf("creating cluster %s: %v", o.Name, flattenKindError(err))
		}
	case <-ctx.Done():
		// Remove the nodes now, so kind's create fails fast, then again once
		// it has returned, in case it made more meanwhile.
		_ = umlBoot.wait()
		cleanup("interrupted")
		select {
		case err := <-done:
			_ = err // kind's create failing after the interrupt: the interrupt is what is reported
		case <-time.After(2 * time.Minute):
		}
		cleanup("interrupted")
		return nil, ctx.Err()
	}
	p.Step("kind create done in %.1fs (Docker network lock held %.2fs)", time.Since(start).Seconds(), networkLock.Seconds())
	_ = os.Chmod(o.Kubeconfig, 0o600)

	c, err := finishUp(ctx, h, prov, o, umlBoot)
	if err != nil {
		reason := "bring-up failed"
		if ctx.Err() != nil {
			reason = "interrupted"
		} else if o.ArtifactsDir != "" {
			for _, f := range saveAppArmorNodeConsoles(o.Name, o.ArtifactsDir) {
				p.Step("AppArmor node console log kept: %s", f)
			}
		}
		cleanup(reason)
		return nil, err
	}
	for _, ref := range images {
		if !slices.Contains(c.Images, ref) {
			c.Images = append(c.Images, ref)
		}
	}
	sort.Strings(c.Images)
	return c, nil
}

// createNodes makes the nodes of cluster o.Name as cfg describes them with
// kind's Create, on the cluster's own Docker network whatever other
// clusters are made at the same time (createOnNetwork, kindnetwork.go),
// and returns how long it held the network lock.
func createNodes(p *progress.Progress, o UpOptions, cfg *v1alpha4.Cluster) (time.Duration, error) {
	return createOnNetwork(p, o.Name, networkName(o.Name),
		cluster.CreateWithV1Alpha4Config(cfg),
		cluster.CreateWithKubeconfigPath(o.Kubeconfig),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
		cluster.CreateWithRetain(false))
}

func flattenKindError(err error) string {
	s := err.Error()
	if i := strings.Index(s, "\n"); i > 0 {
		s = s[:i]
	}
	return s
}

func finishUp(ctx context.Context, h command.Host, prov *cluster.Provider, o UpOptions, uml *umlNodes) (*Cluster, error) {
	p := h.Progress
	cl, err := kubeclient.Load(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cs := cl.Core
	if keep, err := keepsCoreDNS(o.APIServer); err != nil {
		return nil, err
	} else if keep {
		if err := removeCoreDNS(ctx, cs); err != nil {
			return nil, err
		}
	}
	if grant, err := needsRootCAPublisher(o.APIServer); err != nil {
		return nil, err
	} else if grant {
		if err := grantRootCAPublisher(ctx, cs); err != nil {
			return nil, err
		}
	}
	want := 1 + len(o.Kubelets)
	var infos []NodeInfo
	if err := p.Timed("pod networking (CNI config from each node's podCIDR)", func() error {
		infos, err = waitPodCIDRs(ctx, cs, want, o.ReadyTimeout)
		if err != nil {
			return err
		}
		kn, err := prov.ListNodes(o.Name)
		if err != nil {
			return err
		}
		return setupNetworking(kn, infos)
	}); err != nil {
		uml.stop()
		_ = uml.wait() // the caller removes the cluster, these nodes with it
		return nil, err
	}
	if len(o.AppArmorNodes) > 0 {
		what := fmt.Sprintf("%d AppArmor nodes (User-Mode Linux) joined", len(o.AppArmorNodes))
		if len(o.AppArmorNodes) == 1 {
			what = "AppArmor node (User-Mode Linux) joined"
		}
		if err := p.Timed(what, func() error {
			return joinAppArmorNodes(ctx, h, o, uml, cs, infos)
		}); err != nil {
			return nil, err
		}
		want += len(o.AppArmorNodes)
	}
	if err := p.Timed("waiting for nodes Ready and kube-system pods ready", func() error {
		return waitReady(ctx, cs, want, o.ReadyTimeout)
	}); err != nil {
		if ctx.Err() == nil {
			files, cause := saveNotReadyPodLogs(ctx, cs, o.ArtifactsDir)
			for _, f := range files {
				p.Step("log of a pod not ready kept: %s", f)
			}
			if cause != "" {
				err = fmt.Errorf("%w; the cause: %s", err, cause)
			}
		}
		return nil, err
	}
	infos, err = nodeInfos(ctx, cs)
	if err != nil {
		return nil, err
	}
	if err := createOCIRuntimeClasses(ctx, cs, o); err != nil {
		return nil, err
	}
	return &Cluster{Name: o.Name, Kubeconfig: o.Kubeconfig, Nodes: infos}, nil
}

// workers are the workers of o: each kubelet version with its runtime.
func (o UpOptions) workers() []noderuntime.Worker {
	ws := make([]noderuntime.Worker, len(o.Kubelets))
	for i, kl := range o.Kubelets {
		ws[i].Kubelet = kl
		if i < len(o.Runtimes) {
			ws[i].Runtime = o.Runtimes[i]
		}
	}
	return ws
}

// workerNames are o's workers in the --kubelets grammar.
func (o UpOptions) workerNames() []string {
	var ns []string
	for _, w := range o.workers() {
		ns = append(ns, w.String())
	}
	return ns
}

// runtimeLabels adds to labels the node labels of the runtimes of the node
// image ref (from the image's labels; none for an image skewproof did not
// build).
func runtimeLabels(ctx context.Context, h command.Host, ref string, labels map[string]string) map[string]string {
	out, err := h.Docker(ctx, "image", "inspect", "--format", "{{json .Config.Labels}}", ref)
	if err != nil {
		return labels
	}
	var il map[string]string
	if json.Unmarshal([]byte(strings.TrimSpace(out)), &il) != nil {
		return labels
	}
	for from, to := range map[string]string{nodeimage.CRILabel: nodefacts.CRIRuntimeLabel, nodeimage.OCILabel: nodefacts.OCIRuntimeLabel, nodeimage.OCIVersionLabel: nodefacts.OCIRuntimeVersionLabel} {
		if v := il[from]; v != "" {
			labels[to] = v
		}
	}
	return labels
}
