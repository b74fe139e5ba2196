package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/skewproof/skewproof/profiles/api"
)

// EtcdLimit is etcd's object size limit the design note worries about (1 MiB).
const EtcdLimit = 1 << 20

// BenchOptions configure the scale benchmark: simulated nodes are only
// names in node status objects (no Node objects, no kubelets), in a
// namespace of their own that no agent watches.
type BenchOptions struct {
	Namespace string // created and deleted by Bench
	Nodes     int
	Profiles  int
	Workers   int // concurrent writers (default 8)
	// FailedNode, when ≥ 0, is the node whose status of the first profile
	// is Failed (the aggregate must then be Failed).
	FailedNode int
	// NodeName names simulated node i (default scale-node-%05d).
	NodeName func(i int) string
	// Log receives the bench's progress (default: nothing).
	Log *slog.Logger
	// Keep leaves the namespace behind.
	Keep bool
	// GCTimeout bounds the wait for the garbage collector (default 15m);
	// past it, the result says how many node statuses were left.
	GCTimeout time.Duration
}

// ProfileFigures are the measurements of one profile.
type ProfileFigures struct {
	Name      string
	List      time.Duration // one label-selector list of its node statuses
	Aggregate time.Duration // Aggregate over them
	Listed    int
	Status    api.Status
	Nodes     map[api.Status]int32
	// StatusBytes is the profile object's JSON size with its aggregated status.
	StatusBytes int
}

// BenchResult is what Bench measured.
type BenchResult struct {
	Nodes, Profiles int
	Written         int
	WriteAll        time.Duration // all node statuses, Workers at a time
	// Retried counts writes the API server failed with a transient error
	// (etcd timed out, overloaded) and a retry then made (transientWrite).
	Retried int
	// LargestNodeStatusBytes is the JSON size of the largest node status
	// object as the API server returns it.
	LargestNodeStatusBytes int
	PerProfile             []ProfileFigures
	// GC is the time from deleting the profiles until the garbage collector
	// removed every node status, or until GCTimeout with GCLeft left.
	GC     time.Duration
	GCLeft int
	// Single-object alternative: every node's status in a map in the
	// profile's status (what the scalable-status design rejects).
	SingleObjectBytes    int     // the profile with a map of Nodes entries
	SingleObjectPerNode  float64 // bytes per node entry
	SingleObjectMaxNodes int     // node count at which the object passes EtcdLimit
	// The same with 40-character node names (typical cloud node names).
	SingleObjectBytesLongNames    int
	SingleObjectMaxNodesLongNames int
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// DefaultBenchNodeName names simulated nodes.
func DefaultBenchNodeName(i int) string { return fmt.Sprintf("scale-node-%05d", i) }

// benchContent is the seccomp profile of the bench's profiles.
const benchContent = `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]}`

// Bench writes Nodes × Profiles node statuses as the agents would, lists
// and aggregates each profile's statuses, measures object sizes, deletes the
// profiles and times the garbage collection of their node statuses.
func Bench(ctx context.Context, dyn dynamic.Interface, o BenchOptions) (BenchResult, error) {
	b := newBench(dyn, o)
	if err := b.createNamespace(ctx); err != nil {
		return b.res, err
	}
	if !b.o.Keep {
		defer b.deleteNamespace(ctx)
	}
	for _, step := range []func(context.Context) error{
		b.createProfiles,    // Profiles seccomp profiles in the namespace
		b.writeNodeStatuses, // every node's status of every profile, Workers at a time
		b.aggregate,         // each profile's node statuses listed by label and aggregated into its status
		b.sizeSingleObject,  // the single-object alternative, on the first profile
		b.collectGarbage,    // the profiles deleted; the garbage collection of their node statuses timed
	} {
		if err := step(ctx); err != nil {
			return b.res, err
		}
	}
	return b.res, nil
}

// bench is one run of Bench: its options with their defaults, the simulated
// nodes' names, the profiles created and what was measured so far.
type bench struct {
	dyn   dynamic.Interface
	o     BenchOptions
	nodes []string
	profs []api.Profile
	res   BenchResult
	// retried counts the writes that needed a retry (BenchResult.Retried).
	retried atomic.Int64
}

func newBench(dyn dynamic.Interface, o BenchOptions) *bench {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.NodeName == nil {
		o.NodeName = DefaultBenchNodeName
	}
	if o.GCTimeout == 0 {
		o.GCTimeout = 15 * time.Minute
	}
	nodes := make([]string, o.Nodes)
	for i := range nodes {
		nodes[i] = o.NodeName(i)
	}
	return &bench{dyn: dyn, o: o, nodes: nodes, res: BenchResult{Nodes: o.Nodes, Profiles: o.Profiles}}
}

func (b *bench) logf(format string, args ...any) {
	if b.o.Log != nil {
		b.o.Log.Info(fmt.Sprintf(format, args...))
	}
}

// createNamespace creates the bench's namespace, labelled as skewproof's.
func (b *bench) createNamespace(ctx context.Context) error {
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": b.o.Namespace, "labels": map[string]any{"app.kubernetes.io/part-of": "skewproof"}}}}
	if _, err := b.dyn.Resource(namespaces).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", b.o.Namespace, err)
	}
	return nil
}

// deleteNamespace deletes the bench's namespace, even once ctx has ended,
// and logs a failure.
func (b *bench) deleteNamespace(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := b.dyn.Resource(namespaces).Delete(dctx, b.o.Namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		b.logf("deleting namespace %s: %v", b.o.Namespace, err)
	}
}

// createProfiles creates the seccomp profiles scale-profile-0, -1, ….
func (b *bench) createProfiles(ctx context.Context) error {
	for i := 0; i < b.o.Profiles; i++ {
		sp := &api.SeccompProfile{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-profile-%d", i), Namespace: b.o.Namespace},
			Spec: api.SeccompProfileSpec{Content: benchContent}}
		u, err := api.ToUnstructured(sp)
		if err != nil {
			return err
		}
		delete(u.Object, "status")
		created, err := b.dyn.Resource(api.SeccompProfiles).Namespace(b.o.Namespace).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating profile %s: %w", sp.Name, err)
		}
		p, err := api.ProfileFromUnstructured(created)
		if err != nil {
			return err
		}
		b.profs = append(b.profs, p)
	}
	return nil
}

// writeNodeStatuses writes every node's status of every profile, Workers
// at a time; the first error stops the writers.
func (b *bench) writeNodeStatuses(ctx context.Context) error {
	type job struct {
		p    api.Profile
		node int
	}
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		written  atomic.Int64
		firstErr error
		errOnce  sync.Once
		largest  atomic.Int64
	)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	for w := 0; w < b.o.Workers; w++ {
		wg.Go(func() {
			for j := range jobs {
				size, err := b.writeNodeStatus(wctx, j.p, j.node)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				storeMax(&largest, int64(size))
				if n := written.Add(1); n%2500 == 0 {
					b.logf("%d/%d node statuses written (%s)", n, b.o.Nodes*b.o.Profiles, time.Since(start).Round(time.Second))
				}
			}
		})
	}
feed:
	for _, p := range b.profs {
		for i := range b.nodes {
			select {
			case jobs <- job{p, i}:
			case <-wctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	b.res.WriteAll = time.Since(start)
	b.res.Written = int(written.Load())
	b.res.LargestNodeStatusBytes = int(largest.Load())
	b.res.Retried = int(b.retried.Load())
	if firstErr != nil {
		return fmt.Errorf("writing node statuses: %w", firstErr)
	}
	retried := ""
	if b.res.Retried > 0 {
		retried = fmt.Sprintf(" (%d written again after a transient error of the API server)", b.res.Retried)
	}
	b.logf("%d node statuses written in %s%s", b.res.Written, b.res.WriteAll.Round(time.Millisecond), retried)
	return nil
}

// writeBackoff paces the retries of a node status write the API server
// failed with a transient error: as an agent would write it again at its
// next sync, at most 6 times over about 30 s.
var writeBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 6}

// transientWrite says whether a write failed for the API server's load,
// not for what was written: etcd timed out or lost its leader, the server
// timed out or is overloaded. "etcdserver: request is too large" and every
// refusal of the object itself are not retried.
func transientWrite(err error) bool {
	switch {
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err):
		return true
	case apierrors.IsInternalError(err) || apierrors.ReasonForError(err) == metav1.StatusReasonUnknown:
		m := err.Error()
		return strings.Contains(m, "etcdserver: request timed out") || strings.Contains(m, "etcdserver: leader changed") ||
			strings.Contains(m, "etcdserver: too many requests")
	}
	return false
}

// storeMax raises m to v if v is larger, also when other writers raise it
// at the same time (a Load then a Store could lower it again).
func storeMax(m *atomic.Int64, v int64) {
	for cur := m.Load(); v > cur && !m.CompareAndSwap(cur, v); cur = m.Load() {
	}
}

// writeNodeStatus writes node's status of p, as its agent would: Installed,
// but Failed for FailedNode's status of the first profile. It returns the
// JSON size of the object the API server returned (0 if it cannot tell).
func (b *bench) writeNodeStatus(ctx context.Context, p api.Profile, node int) (int, error) {
	s, msg := api.Installed, ""
	if node == b.o.FailedNode && p.Name == b.profs[0].Name {
		s, msg = api.Failed, fmt.Sprintf("writing <seccomp root>/%s: permission denied", p.LocalhostProfile())
	}
	u, err := api.ToUnstructured(p.NewNodeStatus(b.nodes[node], s, msg))
	if err != nil {
		return 0, err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	res := b.dyn.Resource(api.ProfileNodeStatuses).Namespace(b.o.Namespace)
	var out *unstructured.Unstructured
	tries := 0
	err = retry.OnError(writeBackoff, transientWrite, func() (err error) {
		tries++
		out, err = res.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) && tries > 1 {
			// A write that timed out had been made after all.
			out, err = res.Get(ctx, u.GetName(), metav1.GetOptions{})
		}
		return err
	})
	if tries > 1 && err == nil {
		b.retried.Add(1)
	}
	if err != nil {
		return 0, err
	}
	bs, err := json.Marshal(out.Object)
	if err != nil {
		return 0, nil
	}
	return len(bs), nil
}

// aggregate lists each profile's node statuses by label, aggregates them
// and writes the aggregate to the profile's status.
func (b *bench) aggregate(ctx context.Context) error {
	for _, p := range b.profs {
		f, err := b.aggregateProfile(ctx, p)
		if err != nil {
			return err
		}
		b.res.PerProfile = append(b.res.PerProfile, f)
		b.logf("%s: listed %d node statuses in %s, decoded and aggregated in %s: %s %v", p.Name, f.Listed, f.List.Round(time.Millisecond), f.Aggregate, f.Status, f.Nodes)
	}
	return nil
}

// aggregateProfile times the listing of p's node statuses by label and
// their aggregation, writes the aggregate to p's status and sizes p then.
func (b *bench) aggregateProfile(ctx context.Context, p api.Profile) (ProfileFigures, error) {
	t0 := time.Now()
	l, err := b.dyn.Resource(api.ProfileNodeStatuses).Namespace(b.o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: api.ProfileSelector(p.Kind, p.Name)})
	if err != nil {
		return ProfileFigures{}, fmt.Errorf("listing the node statuses of %s: %w", p.Name, err)
	}
	list := time.Since(t0)
	t1 := time.Now()
	states, err := NodeStatesOf(p, l.Items)
	if err != nil {
		return ProfileFigures{}, err
	}
	r := Aggregate(b.nodes, states)
	agg := time.Since(t1)
	_, u, err := GetProfile(ctx, b.dyn, p.Kind, p.Namespace, p.Name)
	if err != nil {
		return ProfileFigures{}, err
	}
	if _, err := WriteStatus(ctx, b.dyn, u, r.ProfileStatus(p.LocalhostProfile(), p.Generation)); err != nil {
		return ProfileFigures{}, err
	}
	_, u, err = GetProfile(ctx, b.dyn, p.Kind, p.Namespace, p.Name)
	if err != nil {
		return ProfileFigures{}, err
	}
	bs, _ := json.Marshal(u.Object)
	return ProfileFigures{Name: p.Name, List: list, Aggregate: agg, Listed: len(l.Items),
		Status: r.Status, Nodes: r.Nodes, StatusBytes: len(bs)}, nil
}

// sizeSingleObject sizes the single-object alternative on the real object
// shape, the first profile's, with the simulated nodes' names and with
// 40-character names.
func (b *bench) sizeSingleObject(context.Context) error {
	res := &b.res
	res.SingleObjectBytes, res.SingleObjectPerNode, res.SingleObjectMaxNodes = singleObject(b.profs[0], b.nodes)
	long := make([]string, len(b.nodes))
	for i := range long {
		long[i] = longNodeName(i)
	}
	res.SingleObjectBytesLongNames, _, res.SingleObjectMaxNodesLongNames = singleObject(b.profs[0], long)
	b.logf("largest node status %d bytes; single object: %d bytes at %d nodes (%.1f bytes/node), passes 1 MiB at %d nodes; with 40-character names %d bytes, passes 1 MiB at %d nodes",
		res.LargestNodeStatusBytes, res.SingleObjectBytes, b.o.Nodes, res.SingleObjectPerNode, res.SingleObjectMaxNodes,
		res.SingleObjectBytesLongNames, res.SingleObjectMaxNodesLongNames)
	return nil
}

// collectGarbage deletes the profiles and times the garbage collector's
// removal of their node statuses. It looks every second until none is left
// or GCTimeout (counted from before the deletions) has passed; the API is
// asked with ctx, not the poll's deadline, so that the last look counts
// what is left. Past GCTimeout, GCLeft says how many were left.
func (b *bench) collectGarbage(ctx context.Context) error {
	t0 := time.Now()
	for _, p := range b.profs {
		if err := b.dyn.Resource(api.SeccompProfiles).Namespace(b.o.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting profile %s: %w", p.Name, err)
		}
	}
	var left int
	err := wait.PollUntilContextTimeout(ctx, time.Second, b.o.GCTimeout-time.Since(t0), true, func(context.Context) (bool, error) {
		n, err := b.nodeStatusesLeft(ctx)
		if err != nil {
			return false, err
		}
		left = n
		return left == 0, nil
	})
	switch {
	case err == nil:
	case !wait.Interrupted(err):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		b.res.GC, b.res.GCLeft = time.Since(t0), left
		b.logf("%d node statuses left %s after their profiles were deleted", left, b.res.GC.Round(time.Second))
		return nil
	}
	b.res.GC = time.Since(t0)
	b.logf("garbage collector removed every node status in %s", b.res.GC.Round(time.Second))
	return nil
}

// nodeStatusesLeft counts the node statuses in the namespace.
func (b *bench) nodeStatusesLeft(ctx context.Context) (int, error) {
	l, err := b.dyn.Resource(api.ProfileNodeStatuses).Namespace(b.o.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	left := len(l.Items)
	if rc := l.GetRemainingItemCount(); rc != nil {
		left += int(*rc)
	}
	return left, nil
}

// SingleObject sizes the single-object alternative for n simulated nodes
// without a cluster: the profile's size with n node names (default names and
// 40-character names) and the node counts at which it passes EtcdLimit.
func SingleObject(n int) BenchResult {
	p := api.Profile{Kind: api.KindSeccompProfile, Namespace: "skewproof-scale-0000", Name: "scale-profile-0", UID: "00000000-0000-0000-0000-000000000000",
		Content: benchContent}
	nodes, long := make([]string, n), make([]string, n)
	for i := range nodes {
		nodes[i] = DefaultBenchNodeName(i)
		long[i] = longNodeName(i)
	}
	r := BenchResult{Nodes: n}
	r.SingleObjectBytes, r.SingleObjectPerNode, r.SingleObjectMaxNodes = singleObject(p, nodes)
	r.SingleObjectBytesLongNames, _, r.SingleObjectMaxNodesLongNames = singleObject(p, long)
	return r
}

// longNodeName is a 40-character node name, as cloud providers name nodes.
func longNodeName(i int) string {
	return fmt.Sprintf("ip-10-%03d-%03d-%03d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)[:40]
}

// singleObject sizes a profile whose status holds every node's status in a
// map (node name → status and message), and the node count at which such
// an object passes EtcdLimit.
func singleObject(p api.Profile, nodes []string) (size int, perNode float64, maxNodes int) {
	build := func(n int) int {
		m := make(map[string]any, n)
		for _, name := range nodes[:n] {
			m[name] = map[string]any{"status": string(api.Installed)}
		}
		obj := map[string]any{
			"apiVersion": api.GroupVersion.String(), "kind": api.KindSeccompProfile,
			"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "uid": p.UID, "resourceVersion": "123456789", "generation": 1},
			"spec":     map[string]any{"content": p.Content},
			"status":   map[string]any{"status": string(api.Installed), "localhostProfile": p.LocalhostProfile(), "nodeStatuses": m},
		}
		b, _ := json.Marshal(obj)
		return len(b)
	}
	size = build(len(nodes))
	base := build(0)
	if len(nodes) == 0 {
		return size, 0, 0
	}
	perNode = float64(size-base) / float64(len(nodes))
	maxNodes = int(float64(EtcdLimit-base)/perNode) + 1
	return size, perNode, maxNodes
}

// Markdown renders r as the table of docs/profiles/scale.md.
func (r BenchResult) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| simulated nodes × profiles | %d × %d = %d node status objects |\n", r.Nodes, r.Profiles, r.Written)
	fmt.Fprintf(&b, "| time to write all node statuses | %s (%.0f objects/s) |\n", r.WriteAll.Round(time.Millisecond), float64(r.Written)/r.WriteAll.Seconds())
	fmt.Fprintf(&b, "| largest node status object | %d bytes (JSON) |\n", r.LargestNodeStatusBytes)
	for _, p := range r.PerProfile {
		var counts []string
		for _, s := range api.Statuses {
			if p.Nodes[s] > 0 {
				counts = append(counts, fmt.Sprintf("%s=%d", s, p.Nodes[s]))
			}
		}
		sort.Strings(counts)
		fmt.Fprintf(&b, "| %s: list by label + decode and aggregate | %s + %s for %d objects → %s (%s); profile object %d bytes |\n",
			p.Name, p.List.Round(time.Millisecond), p.Aggregate.Round(time.Microsecond), p.Listed, p.Status, strings.Join(counts, " "), p.StatusBytes)
	}
	if r.GCLeft > 0 {
		fmt.Fprintf(&b, "| garbage collection after deleting the profiles | %d of %d node statuses left after %s |\n", r.GCLeft, r.Written, r.GC.Round(time.Second))
	} else {
		fmt.Fprintf(&b, "| garbage collection of all node statuses after deleting the profiles | %s (%.0f objects/s) |\n", r.GC.Round(time.Second), float64(r.Written)/r.GC.Seconds())
	}
	fmt.Fprintf(&b, "| single-object alternative at %d nodes (node names as above) | %d bytes, %.1f bytes/node, passes 1 MiB at %d nodes |\n",
		r.Nodes, r.SingleObjectBytes, r.SingleObjectPerNode, r.SingleObjectMaxNodes)
	fmt.Fprintf(&b, "| single-object alternative at %d nodes, 40-character node names | %d bytes, passes 1 MiB at %d nodes |\n",
		r.Nodes, r.SingleObjectBytesLongNames, r.SingleObjectMaxNodesLongNames)
	return b.String()
}
