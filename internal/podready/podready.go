// Package podready says whether a pod is ready, also where an old kubelet
// is late to say so itself.
package podready

import corev1 "k8s.io/api/core/v1"

// Ready says whether pod p is ready: its Ready condition is True, or it
// runs, has no readiness gate, none of its containers has a readiness
// probe, and every container runs with its startup probe passed (Started).
// The second is the same fact, told sooner by a kubelet before v1.21: its
// status manager sets Started as soon as the startup probe succeeds
// (pkg/kubelet/status/status_manager.go, SetContainerStartup, v1.20.15),
// but the pod's Ready condition only at the pod's next sync, the periodic
// one up to a minute later; from v1.21 a startup probe's result syncs the
// pod at once, and both come together (docs/clusters/README.md).
func Ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	if p.Status.Phase != corev1.PodRunning || len(p.Spec.ReadinessGates) > 0 ||
		len(p.Spec.Containers) == 0 || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Spec.Containers {
		if c.ReadinessProbe != nil {
			return false
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Running == nil || s.Started == nil || !*s.Started {
			return false
		}
	}
	return true
}
