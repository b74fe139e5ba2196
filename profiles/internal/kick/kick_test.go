package kick

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// A key whose processing fails comes back; Work returns once ctx ends.
func TestWorkRetriesFailedKeys(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	q := NewQueue("test")
	var (
		mu    sync.Mutex
		calls []string
	)
	done := make(chan struct{})
	go func() {
		Work(ctx, q, func(_ context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, key)
			if len(calls) == 1 {
				return errors.New("first try fails")
			}
			return nil
		}, nil)
		close(done)
	}()
	h := Enqueue(q, func(u *unstructured.Unstructured) []string {
		return []string{ProfileKey("SeccompProfile", u.GetName())}
	})
	u := &unstructured.Unstructured{}
	u.SetName("p")
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: u})
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(calls)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls %v: the failed key was not retried", calls)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if calls[0] != "SeccompProfile/p" || calls[1] != "SeccompProfile/p" {
		t.Errorf("calls %v", calls)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Work did not return after the context ended")
	}
}
