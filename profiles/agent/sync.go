// The agent's reconciliation: one key at a time (a profile, or the sweep of
// what deleted profiles left on the node), each profile brought to its
// generation on this node and its node status written before and after.

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skewproof/skewproof/profiles/api"
)

// sweepKey asks for a pass over the files and AppArmor records of profiles
// that are gone.
const sweepKey = "sweep"

// syncKey handles one key: a profile "kind/name", or the sweep.
func (a *Agent) syncKey(ctx context.Context, key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if key == sweepKey {
		return a.sweep(ctx)
	}
	kind, name, ok := strings.Cut(key, "/")
	inf := a.profiles[kind]
	if !ok || inf == nil {
		return nil
	}
	o, err := inf.Lister().ByNamespace(a.cfg.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return a.removeProfile(ctx, kind, name)
	}
	if err != nil {
		return err
	}
	u := o.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return a.removeProfile(ctx, kind, name)
	}
	var p api.Profile
	if kind == api.KindStaticPod {
		var node string
		if p, node, err = api.StaticPodFromUnstructured(u); err == nil && node != a.cfg.Node {
			// Another node's: nothing of it belongs here.
			return a.removeProfile(ctx, kind, name)
		}
	} else {
		p, err = api.ProfileFromUnstructured(u)
	}
	if err != nil {
		return err
	}
	cur, err := a.currentStatus(p.Name)
	if err != nil {
		return err
	}
	return a.syncProfile(ctx, p, cur)
}

// removeProfile undoes a profile that is gone: its seccomp file removed, its
// AppArmor profile unloaded or its static pod manifest removed, and this
// node's status of it deleted (the garbage collector deletes it too,
// through the owner reference).
func (a *Agent) removeProfile(ctx context.Context, kind, name string) error {
	var err error
	switch kind {
	case api.KindSeccompProfile:
		f := filepath.Join(a.Dir(), name+".json")
		if rerr := os.Remove(f); rerr == nil {
			a.logf("removed %s (its profile is gone)", a.nodePath(f))
		} else if !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
		a.removeEmptyDirs()
	case api.KindAppArmorProfile:
		err = a.unloadAppArmor(ctx, name)
	case api.KindStaticPod:
		err = a.removeStaticPod(name)
	}
	if derr := a.deleteStaleStatus(ctx, kind, name); derr != nil {
		err = errors.Join(err, derr)
	}
	return err
}

// sweep removes the seccomp files and static pod manifests and unloads the
// AppArmor profiles whose objects are gone (deleted while the agent was not
// running, too).
func (a *Agent) sweep(ctx context.Context) error {
	want := map[string]bool{}
	for _, kind := range api.AgentKinds {
		objs, err := a.profiles[kind].Lister().ByNamespace(a.cfg.Namespace).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if u.GetDeletionTimestamp() != nil {
				continue
			}
			if kind == api.KindStaticPod {
				if node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName"); node != a.cfg.Node {
					continue
				}
			}
			want[kind+"/"+u.GetName()] = true
		}
	}
	var errs []error
	if err := a.removeStale(want); err != nil {
		errs = append(errs, err)
	}
	if err := a.removeStaleStaticPods(want); err != nil {
		errs = append(errs, err)
	}
	names, err := a.appArmorRecords()
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if !want[api.KindAppArmorProfile+"/"+n] {
			if err := a.unloadAppArmor(ctx, n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// This node's statuses of profiles that are gone (the garbage collector
	// removes them too).
	sts, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).List(labels.Everything())
	if err != nil {
		errs = append(errs, err)
	}
	for _, o := range sts {
		u := o.(*unstructured.Unstructured)
		kind, _, _ := unstructured.NestedString(u.Object, "profileKind")
		name, _, _ := unstructured.NestedString(u.Object, "profileName")
		node, _, _ := unstructured.NestedString(u.Object, "nodeName")
		if node == a.cfg.Node && kind != "" && name != "" && !want[kind+"/"+name] {
			if err := a.deleteStaleStatus(ctx, kind, name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (a *Agent) syncProfile(ctx context.Context, p api.Profile, cur *unstructured.Unstructured) error {
	var st api.ProfileNodeStatus
	if cur != nil {
		if err := api.FromUnstructured(cur, &st); err != nil {
			return err
		}
		if !ownedBy(st.OwnerReferences, p.UID) {
			// A status left by a former profile of this name: the garbage
			// collector removes it; start afresh.
			if err := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace).Delete(ctx, cur.GetName(),
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(cur.GetUID())}}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			delete(a.written, cur.GetName())
			cur = nil
		}
	}
	// Fast path: already reported for this generation and still true.
	if cur != nil && st.ProfileGeneration == p.Generation {
		switch st.Status {
		case api.Installed:
			if p.Kind == api.KindSeccompProfile && a.fileIs(p) {
				return nil
			}
			if p.Kind == api.KindAppArmorProfile {
				if loaded, known := a.appArmorLoaded(p.Name); loaded || !known {
					return nil
				}
				a.logf("AppArmor profile %s is no longer loaded: loading it again", p.Name)
			}
			if p.Kind == api.KindStaticPod && a.staticPodFileIs(p) {
				return nil
			}
		case api.Unsupported:
			return nil
		}
	}
	if cur == nil {
		// The design note: create this node's status first, then progress.
		created, err := a.writeStatus(ctx, p, nil, api.Pending, "")
		if err != nil {
			return err
		}
		cur = created
		st.Status, st.ProfileGeneration = api.Pending, p.Generation
	}
	// Installing marks new work (a new profile or generation); a retry
	// after a failure goes straight to its result, so a node that keeps
	// failing does not move back and forth.
	newWork := st.Status == api.Pending || (st.ProfileGeneration != p.Generation && st.Status != api.Installing)
	var (
		s   api.Status
		msg string
	)
	// installing reports Installing before new work on this node.
	installing := func() error {
		if !newWork {
			return nil
		}
		updated, err := a.writeStatus(ctx, p, cur, api.Installing, "")
		if err == nil {
			cur = updated
		}
		return err
	}
	switch p.Kind {
	case api.KindSeccompProfile:
		if err := installing(); err != nil {
			return err
		}
		s, msg = api.Installed, ""
		if err := a.writeSeccomp(p); err != nil {
			s, msg = api.Failed, err.Error()
		}
	case api.KindAppArmorProfile:
		ok, why, err := AppArmorKernel(a.cfg.AppArmorEnabledFile)
		if err != nil {
			// Not a fact of the kernel: Unsupported would read as "no
			// AppArmor" and skip every AppArmor spec on the node.
			s, msg = api.Failed, err.Error()
			break
		}
		if !ok {
			s, msg = api.Unsupported, why
			break
		}
		if err := installing(); err != nil {
			return err
		}
		s, msg = a.loadAppArmor(ctx, p)
	case api.KindStaticPod:
		if err := installing(); err != nil {
			return err
		}
		s, msg = a.writeStaticPod(p)
	}
	_, err := a.writeStatus(ctx, p, cur, s, msg)
	return err
}
