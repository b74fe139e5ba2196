// Package kick is the informer plumbing shared by the agent and the
// aggregator: dynamic shared informers whose event handlers put keys into
// a rate-limited work queue, and the loop that works the queue off.
package kick

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Queue is a work queue of keys; a key that failed comes back after an
// exponential delay (100ms up to 30s).
type Queue = workqueue.TypedRateLimitingInterface[string]

// NewQueue returns an empty queue.
func NewQueue(name string) Queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// Object returns the object of an informer event, unwrapping the final
// state of an object deleted while the watch was down; nil when there is
// none.
func Object(obj any) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// Enqueue returns event handlers that add the keys of every added, updated
// (including the informer's periodic resync) and deleted object.
func Enqueue(q Queue, keys func(u *unstructured.Unstructured) []string) cache.ResourceEventHandlerFuncs {
	add := func(obj any) {
		if u := Object(obj); u != nil {
			for _, k := range keys(u) {
				q.Add(k)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    add,
		UpdateFunc: func(_, obj any) { add(obj) },
		DeleteFunc: add,
	}
}

// ProfileKey is the key of a profile: "<kind>/<name>".
func ProfileKey(kind, name string) string { return kind + "/" + name }

// StatusProfileKeys is the key of the profile a node status is about (from
// its profileKind and profileName fields: labels may hold hashes).
func StatusProfileKeys(u *unstructured.Unstructured) []string {
	kind, _, _ := unstructured.NestedString(u.Object, "profileKind")
	name, _, _ := unstructured.NestedString(u.Object, "profileName")
	if kind == "" || name == "" {
		return nil
	}
	return []string{ProfileKey(kind, name)}
}

// Work processes the keys of q one at a time until ctx ends (then it shuts
// the queue down). A key whose process returns an error is retried after a
// growing delay; onErr (optional) is told.
func Work(ctx context.Context, q Queue, process func(ctx context.Context, key string) error, onErr func(key string, err error)) {
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		err := process(ctx, key)
		if err != nil && ctx.Err() == nil {
			if onErr != nil {
				onErr(key, err)
			}
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

// Start starts the informers of the factories and waits until every one
// has its initial list.
func Start(ctx context.Context, what string, factories ...dynamicinformer.DynamicSharedInformerFactory) error {
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	for _, f := range factories {
		for _, synced := range f.WaitForCacheSync(ctx.Done()) {
			if !synced {
				return fmt.Errorf("%s: caches not synced: %w", what, context.Cause(ctx))
			}
		}
	}
	return nil
}
