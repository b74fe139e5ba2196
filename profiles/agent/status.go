// This node's ProfileNodeStatus objects: the agent's view of them (the
// informer's copy, or the one it wrote last while the informer lags), their
// creation and updates, the deletion of those of profiles that are gone, and
// the node-specific events recorded on the profile when a status changes.

package agent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skewproof/skewproof/profiles/api"
)

type writtenStatus struct {
	// replaced holds the resource versions this agent's writes superseded
	// since the informer last caught up ("" for a create).
	replaced map[string]bool
	obj      *unstructured.Unstructured
}

// currentStatus is this node's status object of a profile: the informer's,
// or the one this agent wrote last while the informer has not seen it yet.
func (a *Agent) currentStatus(profile string) (*unstructured.Unstructured, error) {
	name := api.NodeStatusName(profile, a.cfg.Node)
	var cached *unstructured.Unstructured
	o, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).Get(name)
	switch {
	case err == nil:
		cached = o.(*unstructured.Unstructured)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	w, ok := a.written[name]
	switch {
	case !ok:
	case cached == nil && w.replaced[""]:
		// Created by this agent, not seen by the informer yet.
		return w.obj.DeepCopy(), nil
	case cached != nil && cached.GetUID() == w.obj.GetUID() && w.replaced[cached.GetResourceVersion()]:
		// The informer still has a version this agent replaced.
		return w.obj.DeepCopy(), nil
	default:
		delete(a.written, name)
	}
	if cached == nil {
		return nil, nil
	}
	return cached.DeepCopy(), nil
}

// deleteStaleStatus deletes this node's status of a profile that is gone,
// if the informer still has it.
func (a *Agent) deleteStaleStatus(ctx context.Context, kind, name string) error {
	sn := api.NodeStatusName(name, a.cfg.Node)
	delete(a.written, sn)
	o, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).Get(sn)
	if err != nil {
		return nil
	}
	u := o.(*unstructured.Unstructured)
	if k, _, _ := unstructured.NestedString(u.Object, "profileKind"); k != kind {
		return nil
	}
	err = a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(a.cfg.Namespace).Delete(ctx, sn,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(u.GetUID())}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting status %s: %w", sn, err)
	}
	return nil
}

// writeStatus creates (cur == nil) or updates this node's status of p, and
// emits an event on the profile when the status changes to a final state.
func (a *Agent) writeStatus(ctx context.Context, p api.Profile, cur *unstructured.Unstructured, s api.Status, msg string) (*unstructured.Unstructured, error) {
	want := p.NewNodeStatus(a.cfg.Node, s, msg)
	c := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace)
	var (
		out      *unstructured.Unstructured
		prev     api.Status
		replaced string
		err      error
	)
	if cur == nil {
		u, cerr := api.ToUnstructured(want)
		if cerr != nil {
			return nil, cerr
		}
		out, err = c.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			if cur, err = c.Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
	}
	if cur != nil {
		var old api.ProfileNodeStatus
		if err := api.FromUnstructured(cur, &old); err != nil {
			return nil, err
		}
		prev = old.Status
		replaced = cur.GetResourceVersion()
		if old.NodeName != a.cfg.Node {
			return nil, fmt.Errorf("status %s is about node %s, not %s: not touching it", cur.GetName(), old.NodeName, a.cfg.Node)
		}
		if old.Status == s && old.Message == msg && old.ProfileGeneration == p.Generation {
			return cur, nil
		}
		old.Status, old.Message, old.ProfileGeneration = s, msg, p.Generation
		old.Labels = want.Labels
		u, cerr := api.ToUnstructured(&old)
		if cerr != nil {
			return nil, cerr
		}
		out, err = c.Update(ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		// Gone or changed meanwhile: forget what this agent wrote, the
		// retry starts from the informer's copy.
		delete(a.written, want.Name)
		return nil, fmt.Errorf("writing status %s of node %s: %w", want.Name, a.cfg.Node, err)
	}
	if out != nil {
		w, ok := a.written[want.Name]
		if !ok || cur == nil || w.obj.GetResourceVersion() != replaced {
			w = writtenStatus{replaced: map[string]bool{}}
		}
		w.replaced[replaced] = true
		w.obj = out
		a.written[want.Name] = w
	}
	a.logf("%s %s/%s: %s %s", p.Kind, p.Namespace, p.Name, s, msg)
	if s != prev && s != api.Pending && s != api.Installing && a.last[want.Name] != s {
		a.last[want.Name] = s
		a.event(ctx, p, s, msg)
	}
	return out, nil
}

// Event reasons.
const (
	ReasonInstalled   = "ProfileInstalled"
	ReasonFailed      = "ProfileInstallFailed"
	ReasonUnsupported = "ProfileUnsupported"
	// ReasonStaticPodWritten: a StaticPod's manifest is in the node's static
	// pod directory (a failure is ReasonFailed).
	ReasonStaticPodWritten = "StaticPodWritten"
)

// event records a node-specific event on the profile, the node named in the
// message (the design note's preference) and in the source host.
func (a *Agent) event(ctx context.Context, p api.Profile, s api.Status, msg string) {
	if a.cfg.Core == nil {
		return
	}
	reason, typ := ReasonInstalled, corev1.EventTypeNormal
	text := fmt.Sprintf("node %s: installed %s", a.cfg.Node, p.LocalhostProfile())
	if p.Kind == api.KindStaticPod {
		reason, text = ReasonStaticPodWritten, fmt.Sprintf("node %s: wrote %s", a.cfg.Node, msg)
	}
	switch s {
	case api.Failed:
		reason, typ = ReasonFailed, corev1.EventTypeWarning
		text = fmt.Sprintf("node %s: %s", a.cfg.Node, msg)
	case api.Unsupported:
		reason, typ = ReasonUnsupported, corev1.EventTypeWarning
		text = fmt.Sprintf("node %s: unsupported: %s", a.cfg.Node, msg)
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: p.Name + ".", Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: api.GroupVersion.String(), Kind: p.Kind, Namespace: p.Namespace, Name: p.Name, UID: types.UID(p.UID),
		},
		Reason: reason, Message: text, Type: typ,
		Source:              corev1.EventSource{Component: "skewproof-agent", Host: a.cfg.Node},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "profiles.skewproof.io/agent",
		ReportingInstance:   "skewproof-agent-" + a.cfg.Node,
	}
	if _, err := a.cfg.Core.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		a.logf("recording event %s for %s/%s: %v", reason, p.Namespace, p.Name, err)
	}
}

func ownedBy(refs []metav1.OwnerReference, uid string) bool {
	for _, r := range refs {
		if string(r.UID) == uid {
			return true
		}
	}
	return false
}
