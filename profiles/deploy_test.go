package profiles

import (
	"context"
	"errors"
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

// An agent pod that cannot start is named with its container's reason, and
// the wait's own deadline (client-go's rate limiter) is never the reason.
func TestWaitAgentReadyNamesStartError(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: agent.AgentName, Namespace: FixturesNamespace},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 1, UpdatedNumberScheduled: 1}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-w1", Namespace: FixturesNamespace, Labels: map[string]string{"app.kubernetes.io/name": agent.AgentName}},
		Spec: corev1.PodSpec{NodeName: "w1"}, Status: corev1.PodStatus{
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "agent",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128,
					Message: "failed to create containerd task: error executing hook\nmore"}}}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	c := &Cluster{Core: fake.NewSimpleClientset(ds, pod, node), Namespace: FixturesNamespace}
	err := c.WaitAgentReady(context.Background(), 3*time.Second)
	want := "agent not ready on node(s) w1 (agent: CrashLoopBackOff: back-off 10s; last: StartError (exit 128): failed to create containerd task: error executing hook)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("WaitAgentReady = %v\nwant it to say %s", err, want)
	}
	if deadlineNear(errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")) != true {
		t.Error("the rate limiter's deadline error is not recognised")
	}
}
