package status

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/internal/kick"
)

// ListNodeStates lists the node statuses of p with one label-selector list
// and keeps the ones owned by p (not a former profile of the same name).
func ListNodeStates(ctx context.Context, dyn dynamic.Interface, p api.Profile) ([]NodeState, error) {
	l, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: api.ProfileSelector(p.Kind, p.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("listing node statuses of %s %s/%s: %w", p.Kind, p.Namespace, p.Name, err)
	}
	return NodeStatesOf(p, l.Items)
}

// NodeStatesOf turns node status objects into NodeStates, keeping those of p.
func NodeStatesOf(p api.Profile, items []unstructured.Unstructured) ([]NodeState, error) {
	out := make([]NodeState, 0, len(items))
	for i := range items {
		var ns api.ProfileNodeStatus
		if err := api.FromUnstructured(&items[i], &ns); err != nil {
			return nil, fmt.Errorf("reading node status %s: %w", items[i].GetName(), err)
		}
		if ns.ProfileName != p.Name || ns.ProfileKind != p.Kind || !ownedBy(ns.OwnerReferences, p.UID) {
			continue
		}
		out = append(out, NodeState{Node: ns.NodeName, Status: ns.Status, Message: ns.Message})
	}
	return out, nil
}

func ownedBy(refs []metav1.OwnerReference, uid string) bool {
	if uid == "" {
		return true
	}
	for _, r := range refs {
		if string(r.UID) == uid {
			return true
		}
	}
	return false
}

// GetProfile reads a SeccompProfile or AppArmorProfile.
func GetProfile(ctx context.Context, dyn dynamic.Interface, kind, namespace, name string) (api.Profile, *unstructured.Unstructured, error) {
	res, ok := api.Resource(kind)
	if !ok {
		return api.Profile{}, nil, fmt.Errorf("%q is not a profile kind", kind)
	}
	u, err := dyn.Resource(res).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return api.Profile{}, nil, err
	}
	p, err := api.ProfileFromUnstructured(u)
	return p, u, err
}

// WriteStatus sets the status subresource of the profile u to ps, unless it
// already is ps. It reports whether it wrote.
func WriteStatus(ctx context.Context, dyn dynamic.Interface, u *unstructured.Unstructured, ps api.ProfileStatus) (bool, error) {
	p, err := api.ProfileFromUnstructured(u)
	if err != nil {
		return false, err
	}
	if reflect.DeepEqual(normal(p.Status), normal(ps)) {
		return false, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ps)
	if err != nil {
		return false, err
	}
	u = u.DeepCopy()
	u.Object["status"] = m
	res, _ := api.Resource(p.Kind)
	if _, err := dyn.Resource(res).Namespace(p.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("writing the status of %s %s/%s: %w", p.Kind, p.Namespace, p.Name, err)
	}
	return true, nil
}

func normal(ps api.ProfileStatus) api.ProfileStatus {
	if len(ps.Nodes) == 0 {
		ps.Nodes = nil
	}
	if len(ps.NotReady) == 0 {
		ps.NotReady = nil
	}
	return ps
}

// Reconcile aggregates the node statuses of one profile over the expected
// nodes (nil: the nodes that reported) and writes the profile's status.
func Reconcile(ctx context.Context, dyn dynamic.Interface, kind, namespace, name string, expected []string) (Result, error) {
	p, u, err := GetProfile(ctx, dyn, kind, namespace, name)
	if err != nil {
		return Result{}, err
	}
	states, err := ListNodeStates(ctx, dyn, p)
	if err != nil {
		return Result{}, err
	}
	r := Aggregate(expected, states)
	_, err = WriteStatus(ctx, dyn, u, r.ProfileStatus(p.LocalhostProfile(), p.Generation))
	return r, err
}

// Controller keeps the aggregated status of every profile of one namespace.
// It is the only writer of the profiles' status, so the status moves only
// when the aggregate does.
type Controller struct {
	Dyn       dynamic.Interface
	Namespace string
	// Nodes returns the expected nodes; nil Nodes means "the nodes that reported".
	Nodes func(ctx context.Context) ([]string, error)
	// Interval between full passes when nothing changes (default 10s).
	Interval time.Duration
	// Logf, when set, reports each status change and error.
	Logf func(format string, args ...any)
}

func (c *Controller) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Run reconciles every profile on every change of a node status or profile
// (watched), and every Interval, until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	interval := c.Interval
	if interval == 0 {
		interval = 10 * time.Second
	}
	wake := make(chan struct{}, 1)
	for _, r := range []runtimeGVR{api.ProfileNodeStatuses, api.SeccompProfiles, api.AppArmorProfiles} {
		go kick.Watch(ctx, c.Dyn, r, c.Namespace, "", wake, nil)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := c.Pass(ctx); err != nil && ctx.Err() == nil {
			c.logf("aggregating: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			// Coalesce a burst of changes.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
		case <-t.C:
		}
	}
}

// Pass reconciles every profile of the namespace once.
func (c *Controller) Pass(ctx context.Context) error {
	var expected []string
	if c.Nodes != nil {
		n, err := c.Nodes(ctx)
		if err != nil {
			return fmt.Errorf("listing the expected nodes: %w", err)
		}
		expected = n
		if expected == nil {
			expected = []string{}
		}
	}
	all, err := c.Dyn.Resource(api.ProfileNodeStatuses).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing node statuses: %w", err)
	}
	var errs []error
	for _, kind := range []string{api.KindSeccompProfile, api.KindAppArmorProfile} {
		res, _ := api.Resource(kind)
		l, err := c.Dyn.Resource(res).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", res.Resource, err))
			continue
		}
		for i := range l.Items {
			u := &l.Items[i]
			if u.GetDeletionTimestamp() != nil {
				continue
			}
			p, err := api.ProfileFromUnstructured(u)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			states, err := NodeStatesOf(p, all.Items)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r := Aggregate(expected, states)
			wrote, err := WriteStatus(ctx, c.Dyn, u, r.ProfileStatus(p.LocalhostProfile(), p.Generation))
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue // changed meanwhile: the watch brings us back
			}
			if err != nil {
				errs = append(errs, err)
			} else if wrote {
				c.logf("%s %s/%s: %s %v", kind, p.Namespace, p.Name, r.Status, counts(r.Nodes))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

func counts(m map[api.Status]int32) string {
	var parts []string
	for _, s := range api.Statuses {
		if m[s] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", s, m[s]))
		}
	}
	sort.Strings(parts)
	return fmt.Sprint(parts)
}
