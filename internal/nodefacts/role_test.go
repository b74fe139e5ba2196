package nodefacts

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A control plane is known by kubeadm's role label of its release: only
// node-role.kubernetes.io/master before v1.20, both in v1.20-v1.23, only
// node-role.kubernetes.io/control-plane from v1.24.
func TestIsControlPlane(t *testing.T) {
	node := func(labels ...string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubernetes.io/os": "linux"}}}
		for _, l := range labels {
			n.Labels[l] = ""
		}
		return n
	}
	for _, c := range []struct {
		n    *corev1.Node
		want bool
	}{
		{node(LegacyControlPlaneLabel), true},
		{node(LegacyControlPlaneLabel, controlPlaneLabel), true},
		{node(controlPlaneLabel), true},
		{node(), false},
	} {
		if got := IsControlPlane(c.n); got != c.want {
			t.Errorf("IsControlPlane(%v) = %v, want %v", c.n.Labels, got, c.want)
		}
	}
}
