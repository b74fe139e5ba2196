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

// Bench writes Nodes × Profiles node statuses as the agents would, lists
// and aggregates each profile's statuses, measures object sizes, deletes the
// profiles and times the garbage collection of their node statuses.
func Bench(ctx context.Context, dyn dynamic.Interface, o BenchOptions) (BenchResult, error) {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.NodeName == nil {
		o.NodeName = DefaultBenchNodeName
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			o.Log.Info(fmt.Sprintf(format, args...))
		}
	}
	res := BenchResult{Nodes: o.Nodes, Profiles: o.Profiles}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": o.Namespace, "labels": map[string]any{"app.kubernetes.io/part-of": "skewproof"}}}}
	if _, err := dyn.Resource(namespaces).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	if !o.Keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := dyn.Resource(namespaces).Delete(dctx, o.Namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				logf("deleting namespace %s: %v", o.Namespace, err)
			}
		}()
	}
	nodes := make([]string, o.Nodes)
	for i := range nodes {
		nodes[i] = o.NodeName(i)
	}
	var profs []api.Profile
	for i := 0; i < o.Profiles; i++ {
		sp := &api.SeccompProfile{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-profile-%d", i), Namespace: o.Namespace},
			Spec: api.SeccompProfileSpec{Content: `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]}`}}
		u, err := api.ToUnstructured(sp)
		if err != nil {
			return res, err
		}
		delete(u.Object, "status")
		created, err := dyn.Resource(api.SeccompProfiles).Namespace(o.Namespace).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			return res, fmt.Errorf("creating profile %s: %w", sp.Name, err)
		}
		p, err := api.ProfileFromUnstructured(created)
		if err != nil {
			return res, err
		}
		profs = append(profs, p)
	}

	// Write every node status, Workers at a time.
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
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, msg := api.Installed, ""
				if j.node == o.FailedNode && j.p.Name == profs[0].Name {
					s, msg = api.Failed, fmt.Sprintf("writing <seccomp root>/%s: permission denied", j.p.LocalhostProfile())
				}
				u, err := api.ToUnstructured(j.p.NewNodeStatus(nodes[j.node], s, msg))
				if err == nil {
					unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
					var out *unstructured.Unstructured
					out, err = dyn.Resource(api.ProfileNodeStatuses).Namespace(o.Namespace).Create(wctx, u, metav1.CreateOptions{})
					if err == nil {
						if b, merr := json.Marshal(out.Object); merr == nil && int64(len(b)) > largest.Load() {
							largest.Store(int64(len(b)))
						}
					}
				}
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				if n := written.Add(1); n%2500 == 0 {
					logf("%d/%d node statuses written (%s)", n, o.Nodes*o.Profiles, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
feed:
	for _, p := range profs {
		for i := range nodes {
			select {
			case jobs <- job{p, i}:
			case <-wctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	res.WriteAll = time.Since(start)
	res.Written = int(written.Load())
	res.LargestNodeStatusBytes = int(largest.Load())
	if firstErr != nil {
		return res, fmt.Errorf("writing node statuses: %w", firstErr)
	}
	logf("%d node statuses written in %s", res.Written, res.WriteAll.Round(time.Millisecond))

	// List each profile's statuses by label and aggregate them.
	for _, p := range profs {
		t0 := time.Now()
		l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: api.ProfileSelector(p.Kind, p.Name)})
		if err != nil {
			return res, fmt.Errorf("listing the node statuses of %s: %w", p.Name, err)
		}
		list := time.Since(t0)
		t1 := time.Now()
		states, err := NodeStatesOf(p, l.Items)
		if err != nil {
			return res, err
		}
		r := Aggregate(nodes, states)
		agg := time.Since(t1)
		_, u, err := GetProfile(ctx, dyn, p.Kind, p.Namespace, p.Name)
		if err != nil {
			return res, err
		}
		if _, err := WriteStatus(ctx, dyn, u, r.ProfileStatus(p.LocalhostProfile(), p.Generation)); err != nil {
			return res, err
		}
		_, u, err = GetProfile(ctx, dyn, p.Kind, p.Namespace, p.Name)
		if err != nil {
			return res, err
		}
		b, _ := json.Marshal(u.Object)
		res.PerProfile = append(res.PerProfile, ProfileFigures{Name: p.Name, List: list, Aggregate: agg, Listed: len(l.Items),
			Status: r.Status, Nodes: r.Nodes, StatusBytes: len(b)})
		logf("%s: listed %d node statuses in %s, decoded and aggregated in %s: %s %v", p.Name, len(l.Items), list.Round(time.Millisecond), agg, r.Status, r.Nodes)
	}

	// The single-object alternative, measured on the real object shape.
	res.SingleObjectBytes, res.SingleObjectPerNode, res.SingleObjectMaxNodes = singleObject(profs[0], nodes)
	long := make([]string, len(nodes))
	for i := range long {
		long[i] = longNodeName(i)
	}
	res.SingleObjectBytesLongNames, _, res.SingleObjectMaxNodesLongNames = singleObject(profs[0], long)
	logf("largest node status %d bytes; single object: %d bytes at %d nodes (%.1f bytes/node), passes 1 MiB at %d nodes; with 40-character names %d bytes, passes 1 MiB at %d nodes",
		res.LargestNodeStatusBytes, res.SingleObjectBytes, o.Nodes, res.SingleObjectPerNode, res.SingleObjectMaxNodes,
		res.SingleObjectBytesLongNames, res.SingleObjectMaxNodesLongNames)
	if o.GCTimeout == 0 {
		o.GCTimeout = 15 * time.Minute
	}

	// Delete the profiles: the garbage collector removes their node statuses.
	t0 := time.Now()
	for _, p := range profs {
		if err := dyn.Resource(api.SeccompProfiles).Namespace(o.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			return res, fmt.Errorf("deleting profile %s: %w", p.Name, err)
		}
	}
	// Every second until none is left or GCTimeout (counted from t0, before
	// the deletions) has passed; the API is asked with ctx, not the poll's
	// deadline, so that the last look counts what is left.
	var left int
	err := wait.PollUntilContextTimeout(ctx, time.Second, o.GCTimeout-time.Since(t0), true, func(context.Context) (bool, error) {
		l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(o.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		left = len(l.Items)
		if rc := l.GetRemainingItemCount(); rc != nil {
			left += int(*rc)
		}
		return left == 0, nil
	})
	switch {
	case err == nil:
	case !wait.Interrupted(err):
		return res, err
	case ctx.Err() != nil:
		return res, ctx.Err()
	default:
		res.GC, res.GCLeft = time.Since(t0), left
		logf("%d node statuses left %s after their profiles were deleted", left, res.GC.Round(time.Second))
		return res, nil
	}
	res.GC = time.Since(t0)
	logf("garbage collector removed every node status in %s", res.GC.Round(time.Second))
	return res, nil
}

// SingleObject sizes the single-object alternative for n simulated nodes
// without a cluster: the profile's size with n node names (default names and
// 40-character names) and the node counts at which it passes EtcdLimit.
func SingleObject(n int) BenchResult {
	p := api.Profile{Kind: api.KindSeccompProfile, Namespace: "skewproof-scale-0000", Name: "scale-profile-0", UID: "00000000-0000-0000-0000-000000000000",
		Content: `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]}`}
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
