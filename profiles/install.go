// Installing and uninstalling profiles: a Manifest applied as its API
// object, then the wait until every expected node reports the wanted status
// and the aggregator's status of the profile agrees; on uninstall, the wait
// until the garbage collector has removed the node statuses.

package profiles

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

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
	err := wait.PollUntilContextTimeout(ctx, pollInterval, o.Timeout, true, func(ctx context.Context) (bool, error) {
		done := true
		for i, m := range ms {
			p, _, err := status.GetProfile(ctx, c.Dynamic, m.Kind, c.Namespace, m.Name)
			if err != nil {
				if ctx.Err() == nil { // the wait's own deadline is no reason
					lastErr = err
				}
				return false, nil
			}
			states, err := status.ListNodeStates(ctx, c.Dynamic, p)
			if err != nil {
				if ctx.Err() == nil {
					lastErr = err
				}
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
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
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
