package profiles

// Profile distribution through the cluster's API (the security-profiles-operator scalable-status design):
// SeccompProfile and AppArmorProfile objects, a node agent DaemonSet that
// puts them on every node and reports one ProfileNodeStatus per profile and
// node, and an aggregator that keeps each profile's aggregated status. This
// works on any cluster (no docker exec), given the agent image on its nodes.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

// FieldManager is the field manager of everything skewproof applies.
const FieldManager = "skewproof"

// Cluster is a connection to the cluster profiles are distributed in.
type Cluster struct {
	Config    *rest.Config
	Core      kubernetes.Interface
	Dynamic   dynamic.Interface
	Namespace string // of the agent, the profiles and their node statuses
}

// Connect connects to the cluster of a kubeconfig; namespace defaults to
// agent.DefaultNamespace.
func Connect(kubeconfig, namespace string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return NewCluster(cfg, namespace)
}

// NewCluster connects with a REST configuration.
func NewCluster(cfg *rest.Config, namespace string) (*Cluster, error) {
	if namespace == "" {
		namespace = agent.DefaultNamespace
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Config: cfg, Core: core, Dynamic: dyn, Namespace: namespace}, nil
}

// AgentImageRef is the agent image name for a skewproof binary and the
// extra layers under it: its tag hashes both, so a changed binary or layer
// is a new image.
func AgentImageRef(binary string, extra ...clusters.ExtraLayer) (string, error) {
	f, err := os.Open(binary)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	for _, e := range extra {
		fmt.Fprintf(h, "\nlayer %s", e.Digest)
	}
	return "skewproof.local/skewproof-agent:" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// AgentImage is an agent image loaded into the nodes.
type AgentImage struct {
	Ref string
	// AppArmorParser is the package apparmor_parser comes from ("apparmor
	// 3.0.8-3"), empty when the image has none.
	AppArmorParser string
	// Note says why the image has no apparmor_parser (nodes with AppArmor
	// then report Failed for AppArmorProfiles).
	Note string
}

// agentImage names the agent image of a binary and gathers its extra
// layers: apparmor_parser with its libraries when the build host's package
// manager provides Debian's apparmor package (clusters.AppArmorParserLayer);
// without it the image still builds.
func agentImage(ctx context.Context, binary string) (AgentImage, []clusters.ExtraLayer, error) {
	var (
		img   AgentImage
		extra []clusters.ExtraLayer
	)
	l, err := clusters.AppArmorParserLayer(ctx)
	switch {
	case err == nil:
		extra = append(extra, l)
		img.AppArmorParser = l.Version
	case errors.Is(err, clusters.ErrNoAppArmorPackage):
		img.Note = "the agent image has no apparmor_parser: " + err.Error()
	default:
		return img, nil, fmt.Errorf("adding apparmor_parser to the agent image: %w", err)
	}
	if img.Ref, err = AgentImageRef(binary, extra...); err != nil {
		return img, nil, fmt.Errorf("hashing the agent binary: %w", err)
	}
	return img, extra, nil
}

// LoadAgentImage builds the agent image from a static skewproof binary
// (CGO_ENABLED=0) offline and imports it into each named kind node
// container.
func LoadAgentImage(ctx context.Context, binary string, nodes []string) (AgentImage, error) {
	img, extra, err := agentImage(ctx, binary)
	if err != nil {
		return img, err
	}
	if err := clusters.LoadBinaryImage(ctx, img.Ref, binary, agent.BinaryInImage, []string{agent.BinaryInImage, "agent"}, nodes, extra...); err != nil {
		return img, fmt.Errorf("loading the agent image: %w", err)
	}
	return img, nil
}

// SaveAgentImage writes the agent image of LoadAgentImage as a "docker
// save" archive at archive, for clusters whose nodes pull from a registry:
// load it (docker load, ctr images import), tag and push it, and pass the
// reference to 'skewproof run --agent-image' or 'profiles deploy --image'.
func SaveAgentImage(ctx context.Context, binary, archive string) (AgentImage, error) {
	img, extra, err := agentImage(ctx, binary)
	if err != nil {
		return img, err
	}
	work, err := os.MkdirTemp("", "skewproof-agent-image-")
	if err != nil {
		return img, err
	}
	defer os.RemoveAll(work)
	if err := clusters.WriteBinaryImage(archive, work, img.Ref, binary, agent.BinaryInImage, []string{agent.BinaryInImage, "agent"}, extra...); err != nil {
		os.Remove(archive)
		return img, fmt.Errorf("writing the agent image: %w", err)
	}
	return img, nil
}

func (c *Cluster) apply(ctx context.Context, o agent.Object) error {
	r := c.Dynamic.Resource(o.Resource)
	var ri dynamic.ResourceInterface = r
	if o.Namespaced() {
		ri = r.Namespace(o.Object.GetNamespace())
	}
	_, err := ri.Apply(ctx, o.Object.GetName(), o.Object, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", o.Object.GetKind(), o.Object.GetName(), err)
	}
	return nil
}

// InstallCRDs applies the API's CRDs and waits until they are established.
func (c *Cluster) InstallCRDs(ctx context.Context) error {
	crds, err := api.CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := c.apply(ctx, agent.Object{Resource: api.CRDResource, Object: crd}); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		err := poll(ctx, 60*time.Second, func(ctx context.Context) (bool, error) {
			u, err := c.Dynamic.Resource(api.CRDResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, cd := range conds {
				m, _ := cd.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
		}
	}
	return nil
}

// Deploy installs the CRDs, the agent DaemonSet and the aggregator, and
// waits until the agent is Ready on every node it is scheduled to.
func (c *Cluster) Deploy(ctx context.Context, o agent.DeployOptions, timeout time.Duration) error {
	o.Namespace = c.Namespace
	if err := c.InstallCRDs(ctx); err != nil {
		return err
	}
	minor := c.serverMinor()
	if !o.OwnNodePolicy {
		// ValidatingAdmissionPolicy v1 (1.30) and the node name in service
		// account tokens (1.32) are both needed.
		o.OwnNodePolicy = minor >= 32
	}
	if minor > 0 && minor < 30 {
		// securityContext.appArmorProfile is 1.30+.
		o.AppArmorAnnotation = true
	}
	objs, err := agent.Objects(o)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.apply(ctx, obj); err != nil {
			return err
		}
	}
	return c.WaitAgentReady(ctx, timeout)
}

// serverMinor is the API server's minor version (1.x), 0 when unknown.
func (c *Cluster) serverMinor() int {
	v, err := c.Core.Discovery().ServerVersion()
	if err != nil || v.Major != "1" {
		return 0
	}
	var minor int
	fmt.Sscanf(strings.TrimRight(v.Minor, "+"), "%d", &minor)
	return minor
}

// WaitAgentReady waits until the agent DaemonSet is rolled out and Ready
// on every node it is scheduled to; the error names the nodes that are not.
func (c *Cluster) WaitAgentReady(ctx context.Context, timeout time.Duration) error {
	var last string
	err := poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		ds, err := c.Core.AppsV1().DaemonSets(c.Namespace).Get(ctx, agent.AgentName, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if ok, why := daemonSetReady(ds); !ok {
			last = why + "; " + c.notReadyAgents(ctx)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("agent DaemonSet not ready within %s: %s", timeout, last)
	}
	return nil
}

func daemonSetReady(ds *appsv1.DaemonSet) (bool, string) {
	s := ds.Status
	switch {
	case s.ObservedGeneration < ds.Generation:
		return false, "not observed yet"
	case s.DesiredNumberScheduled == 0:
		return false, "scheduled on no node"
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled || s.NumberReady < s.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d/%d updated, %d/%d ready", s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberReady, s.DesiredNumberScheduled)
	}
	return true, ""
}

// AgentPods maps node name to the agent pod's readiness.
func (c *Cluster) AgentPods(ctx context.Context) (map[string]bool, error) {
	pl, err := c.Core.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + agent.AgentName})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pl.Items {
		ready := false
		for _, cd := range p.Status.Conditions {
			if cd.Type == "Ready" && cd.Status == "True" {
				ready = true
			}
		}
		if p.DeletionTimestamp == nil {
			out[p.Spec.NodeName] = out[p.Spec.NodeName] || ready
		}
	}
	return out, nil
}

func (c *Cluster) notReadyAgents(ctx context.Context) string {
	m, err := c.AgentPods(ctx)
	if err != nil {
		return err.Error()
	}
	var bad []string
	for n, ok := range m {
		if !ok {
			bad = append(bad, n)
		}
	}
	sort.Strings(bad)
	if len(bad) == 0 {
		return "every agent pod is ready"
	}
	return "agent not ready on node(s) " + strings.Join(bad, ", ")
}

// Manifest is one profile to distribute.
type Manifest struct {
	Kind    string // api.KindSeccompProfile or api.KindAppArmorProfile
	Name    string // object name: a file name (seccomp) or the AppArmor profile name
	Content string // seccomp JSON or AppArmor policy
}

// Object is the API object of m in namespace.
func (m Manifest) Object(namespace string) (*unstructured.Unstructured, error) {
	if err := api.ValidateProfileName(m.Name); err != nil {
		return nil, err
	}
	meta := metav1.ObjectMeta{Name: m.Name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof"}}
	var obj runtime.Object
	switch m.Kind {
	case api.KindSeccompProfile:
		obj = &api.SeccompProfile{ObjectMeta: meta, Spec: api.SeccompProfileSpec{Content: m.Content}}
	case api.KindAppArmorProfile:
		obj = &api.AppArmorProfile{ObjectMeta: meta, Spec: api.AppArmorProfileSpec{Policy: m.Content}}
	default:
		return nil, fmt.Errorf("profile %s: unknown kind %q", m.Name, m.Kind)
	}
	u, err := api.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// InstallOptions say what Install waits for.
type InstallOptions struct {
	// Want is the status each node must reach, per node name; nodes not in
	// it must reach Installed (the deliberate partial state of a failure row
	// names its node here, e.g. {"t-worker": api.Failed}). For
	// AppArmorProfiles on nodes without AppArmor, ask for api.Unsupported.
	Want map[string]api.Status
	// Timeout, 2 minutes when zero.
	Timeout time.Duration
	// Settled accepts Installed or Unsupported from every node not in Want
	// (AppArmor profiles on a cluster whose nodes may or may not have
	// AppArmor); the aggregate must then be the lowest of what they report.
	Settled bool
}

// NodeReport is the outcome of one profile.
type NodeReport struct {
	Manifest  Manifest
	Aggregate api.Status
	// LocalhostProfile is what pods put in localhostProfile.
	LocalhostProfile string
	Nodes            []status.NodeState // every expected node
}

// Install applies the profiles and returns when, for every profile, every
// node's status is the expected one and the profile's aggregated status
// (written by the aggregator) is the lowest of them. nodes are the expected
// nodes (nil: every node with an agent pod). The error names the nodes that
// did not get there within the timeout.
func Install(ctx context.Context, c *Cluster, ms []Manifest, nodes []string, o InstallOptions) ([]NodeReport, error) {
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	if nodes == nil {
		m, err := c.AgentPods(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the agent pods: %w", err)
		}
		for n := range m {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
	}
	want := func(node string) api.Status {
		if s, ok := o.Want[node]; ok {
			return s
		}
		return api.Installed
	}
	wantAggregate := api.Installed
	for _, n := range nodes {
		if want(n).Rank() < wantAggregate.Rank() {
			wantAggregate = want(n)
		}
	}
	for _, m := range ms {
		u, err := m.Object(c.Namespace)
		if err != nil {
			return nil, err
		}
		res, _ := api.Resource(m.Kind)
		if _, err := c.Dynamic.Resource(res).Namespace(c.Namespace).Apply(ctx, m.Name, u,
			metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return nil, fmt.Errorf("applying %s %s: %w", m.Kind, m.Name, err)
		}
	}
	reports := make([]NodeReport, len(ms))
	var lastErr error
	err := poll(ctx, o.Timeout, func(ctx context.Context) (bool, error) {
		done := true
		lastErr = nil
		for i, m := range ms {
			p, _, err := status.GetProfile(ctx, c.Dynamic, m.Kind, c.Namespace, m.Name)
			if err != nil {
				lastErr = err
				return false, nil
			}
			states, err := status.ListNodeStates(ctx, c.Dynamic, p)
			if err != nil {
				lastErr = err
				return false, nil
			}
			r := status.Aggregate(nodes, states)
			all := allStates(nodes, states)
			reports[i] = NodeReport{Manifest: m, Aggregate: p.Status.Status, LocalhostProfile: p.LocalhostProfile(), Nodes: all}
			var off []string
			for _, s := range all {
				if _, fixed := o.Want[s.Node]; o.Settled && !fixed && s.Status == api.Unsupported {
					continue
				}
				if s.Status != want(s.Node) {
					off = append(off, fmt.Sprintf("%s is %s, want %s%s", s.Node, s.Status, want(s.Node), msgSuffix(s.Message)))
				}
			}
			if len(off) > 0 {
				done = false
				lastErr = fmt.Errorf("%s %s: %s", m.Kind, m.Name, strings.Join(off, "; "))
				continue
			}
			// The aggregator has caught up when the profile's status shows
			// the same status and the same counts as the node statuses.
			if p.Status.Status != r.Status || (r.Status != wantAggregate && !o.Settled) || p.Status.ObservedGeneration != p.Generation ||
				!sameCounts(p.Status.Nodes, r.Nodes) {
				done = false
				lastErr = fmt.Errorf("%s %s: aggregated status %q %v (generation %d of %d), want %s %v", m.Kind, m.Name,
					p.Status.Status, p.Status.Nodes, p.Status.ObservedGeneration, p.Generation, r.Status, r.Nodes)
			}
		}
		return done, nil
	})
	if err != nil {
		if lastErr == nil {
			lastErr = err
		}
		return reports, fmt.Errorf("profiles not in the expected state within %s: %w", o.Timeout, lastErr)
	}
	return reports, nil
}

func sameCounts(a, b map[api.Status]int32) bool {
	for _, s := range api.Statuses {
		if a[s] != b[s] {
			return false
		}
	}
	return true
}

func msgSuffix(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

// allStates is the state of every expected node (Pending when it has none).
func allStates(nodes []string, got []status.NodeState) []status.NodeState {
	by := map[string]status.NodeState{}
	for _, s := range got {
		by[s.Node] = s
	}
	out := make([]status.NodeState, 0, len(nodes))
	for _, n := range nodes {
		s, ok := by[n]
		if !ok {
			s = status.NodeState{Node: n, Status: api.Pending}
		}
		out = append(out, s)
	}
	return out
}

// Uninstall deletes profiles (or StaticPods: of ms only Kind and Name are
// used); the garbage collector deletes their node statuses and the agents
// remove their files. It waits until the node statuses are gone.
func Uninstall(ctx context.Context, c *Cluster, ms []Manifest, timeout time.Duration) error {
	for _, m := range ms {
		res, ok := api.AgentResource(m.Kind)
		if !ok {
			return fmt.Errorf("profile %s: unknown kind %q", m.Name, m.Kind)
		}
		if err := c.Dynamic.Resource(res).Namespace(c.Namespace).Delete(ctx, m.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", m.Kind, m.Name, err)
		}
	}
	var (
		left    []string
		listErr error
	)
	err := poll(ctx, timeout, func(ctx context.Context) (bool, error) {
		var now []string
		for _, m := range ms {
			l, err := c.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(c.Namespace).List(ctx,
				metav1.ListOptions{LabelSelector: api.ProfileSelector(m.Kind, m.Name)})
			if err != nil {
				listErr = err
				return false, nil
			}
			for _, it := range l.Items {
				now = append(now, it.GetName())
			}
		}
		left, listErr = now, nil
		return len(left) == 0, nil
	})
	if err != nil {
		if listErr != nil {
			return fmt.Errorf("node statuses of deleted profiles not gone after %s: %w", timeout, listErr)
		}
		return fmt.Errorf("node statuses left %s after their profiles were deleted (the garbage collector removes them): %s", timeout, strings.Join(left, ", "))
	}
	return nil
}

// Teardown removes what Deploy made: the namespace (with the profiles,
// static pods, node statuses and agents), the cluster-scoped RBAC and
// policy objects, and, with crds, the CRDs.
//
// The profiles and static pods go first, while the agents still run, so
// that the agents remove their files from the nodes.
func (c *Cluster) Teardown(ctx context.Context, crds bool) error {
	objs, err := agent.Objects(agent.DeployOptions{Namespace: c.Namespace, Image: "unused", OwnNodePolicy: true})
	if err != nil {
		return err
	}
	var errs []error
	var ms []Manifest
	for _, kind := range api.AgentKinds {
		res, _ := api.AgentResource(kind)
		l, err := c.Dynamic.Resource(res).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue // no CRD or no namespace: nothing to remove from nodes
		}
		for _, it := range l.Items {
			ms = append(ms, Manifest{Kind: kind, Name: it.GetName()})
		}
	}
	if len(ms) > 0 {
		if err := Uninstall(ctx, c, ms, 2*time.Minute); err != nil {
			errs = append(errs, err)
		}
		// The agents remove files on the deletion events; give them a pass.
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		if o.Namespaced() {
			continue // goes with the namespace
		}
		err := c.Dynamic.Resource(o.Resource).Delete(ctx, o.Object.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if crds {
		all, err := api.CRDs()
		if err != nil {
			return err
		}
		for _, crd := range all {
			if err := c.Dynamic.Resource(api.CRDResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// poll calls f every 500ms until it is done, fails, or timeout passes.
func poll(ctx context.Context, timeout time.Duration, f func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := f(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
