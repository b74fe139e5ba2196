package podready

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestReady(t *testing.T) {
	yes, no := true, false
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(cond corev1.ConditionStatus, started *bool, readinessProbe bool) *corev1.Pod {
		c := corev1.Container{Name: "c", StartupProbe: &corev1.Probe{}}
		if readinessProbe {
			c.ReadinessProbe = &corev1.Probe{}
		}
		return &corev1.Pod{
			Spec: corev1.PodSpec{Containers: []corev1.Container{c}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: running, Started: started}}},
		}
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"Ready condition", pod(corev1.ConditionTrue, &yes, true), true},
		// A v1.20 kubelet after the startup probe, before its periodic sync.
		{"started, no readiness probe", pod(corev1.ConditionFalse, &yes, false), true},
		{"started, a readiness probe not passed", pod(corev1.ConditionFalse, &yes, true), false},
		{"startup probe not passed", pod(corev1.ConditionFalse, &no, false), false},
		{"Started not reported", pod(corev1.ConditionFalse, nil, false), false},
	} {
		if got := Ready(c.pod); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	p := pod(corev1.ConditionFalse, &yes, false)
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if Ready(p) {
		t.Error("a container that does not run counted ready")
	}
	p = pod(corev1.ConditionFalse, &yes, false)
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "x"}}
	if Ready(p) {
		t.Error("a pod with a readiness gate counted ready without its condition")
	}
}
