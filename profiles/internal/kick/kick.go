// Package kick turns watch events into wake-ups for a reconcile loop.
package kick

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Watch sends on kick (without blocking) whenever an object of r in
// namespace matching selector changes, re-watching after errors (reported
// to onErr, which may be nil) until ctx ends.
func Watch(ctx context.Context, dyn dynamic.Interface, r schema.GroupVersionResource, namespace, selector string, kick chan<- struct{}, onErr func(error)) {
	for ctx.Err() == nil {
		w, err := dyn.Resource(r).Namespace(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			if onErr != nil {
				onErr(err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
			continue
		}
		for range w.ResultChan() {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		w.Stop()
	}
}
