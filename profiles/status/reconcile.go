package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

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
// when the aggregate does. It watches the profiles and, through one
// informer indexed by the profile labels, the node statuses; each change
// enqueues the profile concerned.
type Controller struct {
	Dyn       dynamic.Interface
	Namespace string
	// Nodes returns the expected nodes; nil Nodes means "the nodes that
	// reported". It is called for every profile reconciled: make it cheap
	// (an informer's lister), and call EnqueueAll when the set changes.
	Nodes func(ctx context.Context) ([]string, error)
	// Interval is the informers' resync period (default 10s): every profile
	// is reconciled again at least that often.
	Interval time.Duration
	// Log, when set, receives each status change and error.
	Log *slog.Logger

	once     sync.Once
	queue    kick.Queue
	factory  dynamicinformer.DynamicSharedInformerFactory
	profiles map[string]informers.GenericInformer
	statuses informers.GenericInformer
	// statusFactory holds the node status informer (its own label filter).
	statusFactory dynamicinformer.DynamicSharedInformerFactory
}

// byProfile indexes node statuses by their kind and profile labels.
const byProfile = "profile"

func profileIndexKey(kind, labelValue string) string { return kind + "/" + labelValue }

func (c *Controller) init() {
	c.once.Do(func() {
		interval := c.Interval
		if interval == 0 {
			interval = 10 * time.Second
		}
		c.queue = kick.NewQueue("skewproof-aggregator")
		c.factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dyn, interval, c.Namespace, nil)
		c.profiles = map[string]informers.GenericInformer{}
		for _, kind := range []string{api.KindSeccompProfile, api.KindAppArmorProfile} {
			res, _ := api.Resource(kind)
			inf := c.factory.ForResource(res)
			c.profiles[kind] = inf
			_, _ = inf.Informer().AddEventHandler(kick.Enqueue(c.queue, func(u *unstructured.Unstructured) []string {
				return []string{kick.ProfileKey(kind, u.GetName())}
			}))
		}
		// Only objects with the profile label: the node statuses.
		stFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dyn, interval, c.Namespace,
			func(o *metav1.ListOptions) { o.LabelSelector = api.LabelProfile + "," + api.LabelKind })
		c.statuses = stFactory.ForResource(api.ProfileNodeStatuses)
		_ = c.statuses.Informer().AddIndexers(cache.Indexers{byProfile: func(obj any) ([]string, error) {
			u := kick.Object(obj)
			if u == nil {
				return nil, nil
			}
			l := u.GetLabels()
			return []string{profileIndexKey(l[api.LabelKind], l[api.LabelProfile])}, nil
		}})
		_, _ = c.statuses.Informer().AddEventHandler(kick.Enqueue(c.queue, kick.StatusProfileKeys))
		c.statusFactory = stFactory
	})
}

// EnqueueAll asks for every profile to be reconciled (e.g. when the set of
// expected nodes changed).
func (c *Controller) EnqueueAll() {
	c.init()
	for kind, inf := range c.profiles {
		objs, _ := inf.Lister().ByNamespace(c.Namespace).List(labels.Everything())
		for _, o := range objs {
			c.queue.Add(kind + "/" + o.(*unstructured.Unstructured).GetName())
		}
	}
}

// Start starts the informers and waits for their first lists.
func (c *Controller) Start(ctx context.Context) error {
	c.init()
	return kick.Start(ctx, "aggregator", c.factory, c.statusFactory)
}

// Run starts the informers and reconciles each profile whose object or
// node statuses change (and every Interval), until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Start(ctx); err != nil {
		return err
	}
	kick.Work(ctx, c.queue, c.reconcileKey, func(key string, err error) { c.logf("aggregating %s: %v", key, err) })
	c.factory.Shutdown()
	c.statusFactory.Shutdown()
	return nil
}

// Pass reconciles every profile of the namespace once, from the caches.
// Start must have been called.
func (c *Controller) Pass(ctx context.Context) error {
	c.init()
	var errs []error
	for kind, inf := range c.profiles {
		objs, err := inf.Lister().ByNamespace(c.Namespace).List(labels.Everything())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range objs {
			if err := c.reconcileKey(ctx, kind+"/"+o.(*unstructured.Unstructured).GetName()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// reconcileKey writes the aggregated status of the profile "kind/name"
// from the informers' caches.
func (c *Controller) reconcileKey(ctx context.Context, key string) error {
	kind, name, _ := strings.Cut(key, "/")
	inf := c.profiles[kind]
	if inf == nil {
		return nil
	}
	o, err := inf.Lister().ByNamespace(c.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // gone: the garbage collector removes its node statuses
	}
	if err != nil {
		return err
	}
	u := o.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return nil
	}
	p, err := api.ProfileFromUnstructured(u)
	if err != nil {
		return err
	}
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
	items, err := c.statuses.Informer().GetIndexer().ByIndex(byProfile, profileIndexKey(kind, api.LabelValue(name)))
	if err != nil {
		return err
	}
	objs := make([]unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		objs = append(objs, *it.(*unstructured.Unstructured))
	}
	states, err := NodeStatesOf(p, objs)
	if err != nil {
		return err
	}
	r := Aggregate(expected, states)
	wrote, err := WriteStatus(ctx, c.Dyn, u, r.ProfileStatus(p.LocalhostProfile(), p.Generation))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		// A conflict: the cache is behind; the update event brings the
		// profile back, the retry too.
		return err
	}
	if wrote {
		c.logf("%s %s/%s: %s %v", kind, p.Namespace, p.Name, r.Status, counts(r.Nodes))
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

func (c *Controller) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log.Info(fmt.Sprintf(format, args...))
	}
}
