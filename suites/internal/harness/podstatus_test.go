package harness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodStatusFindsEveryKindOfContainer: the status of an init container
// (a sidecar too), a container and an ephemeral container is found by name,
// so that each can be observed while it runs.
func TestPodStatusFindsEveryKindOfContainer(t *testing.T) {
	p := &corev1.Pod{Status: corev1.PodStatus{
		InitContainerStatuses:      []corev1.ContainerStatus{{Name: "init", RestartCount: 1}, {Name: "sidecar", RestartCount: 2}},
		ContainerStatuses:          []corev1.ContainerStatus{{Name: "app", RestartCount: 3}},
		EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debugger", RestartCount: 4}},
	}}
	for name, restarts := range map[string]int32{"init": 1, "sidecar": 2, "app": 3, "debugger": 4} {
		s, ok := PodStatus(p, name)
		if !ok || s.RestartCount != restarts {
			t.Errorf("%s: got %+v, %v", name, s, ok)
		}
	}
	if _, ok := PodStatus(p, "missing"); ok {
		t.Errorf("a container the pod does not have was found")
	}
}
