package profiles

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/skewproof/skewproof/profiles/agent"
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

// An agent that is not ready because its node stopped being Ready (after
// the run checked the nodes) fails the wait at once, naming the node and
// its condition, instead of at the time-out.
func TestWaitAgentReadyNodeGone(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: agent.AgentName, Namespace: FixturesNamespace},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, UpdatedNumberScheduled: 2, NumberReady: 1}}
	pod := func(node string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + node, Namespace: FixturesNamespace, Labels: map[string]string{"app.kubernetes.io/name": agent.AgentName}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: "Ready", Status: ready}}}}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}}}
	c := &Cluster{Core: fake.NewSimpleClientset(ds, pod("cp", corev1.ConditionTrue), pod("w1", corev1.ConditionFalse), node), Namespace: FixturesNamespace}
	start := time.Now()
	err := c.WaitAgentReady(context.Background(), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "node w1 went not Ready (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)") {
		t.Fatalf("WaitAgentReady = %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s: want at once", time.Since(start))
	}
}
