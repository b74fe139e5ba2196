package profiles

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// An earlier run's agent namespace that is still terminating is waited for
// (nothing can be created in it); one that does not go is named with the
// pod that holds it and the remedy.
func TestWaitNamespaceGone(t *testing.T) {
	ctx := context.Background()
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FixturesNamespace,
		DeletionTimestamp: &metav1.Time{Time: time.Now().Add(-time.Minute)}}}
	stuck := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "skewproof-agent-x", Namespace: FixturesNamespace}, Spec: corev1.PodSpec{NodeName: "gone"}}

	core := fake.NewSimpleClientset(terminating.DeepCopy())
	c := &Cluster{Core: core, Namespace: FixturesNamespace}
	go func() {
		time.Sleep(700 * time.Millisecond)
		_ = core.CoreV1().Namespaces().Delete(ctx, FixturesNamespace, metav1.DeleteOptions{})
	}()
	if err := c.waitNamespaceGone(ctx, 10*time.Second); err != nil {
		t.Errorf("a namespace that goes: %v", err)
	}

	c = &Cluster{Core: fake.NewSimpleClientset(terminating.DeepCopy(), stuck), Namespace: FixturesNamespace}
	err := c.waitNamespaceGone(ctx, 1200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "pod skewproof-agent-x on node gone") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a namespace that stays: %v", err)
	}

	live := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FixturesNamespace}}
	c = &Cluster{Core: fake.NewSimpleClientset(live), Namespace: FixturesNamespace}
	start := time.Now()
	if err := c.waitNamespaceGone(ctx, time.Minute); err != nil || time.Since(start) > time.Second {
		t.Errorf("a live namespace: %v after %s", err, time.Since(start))
	}
}
