package clusters

import corev1 "k8s.io/api/core/v1"

// controlPlaneLabel is kubeadm's role label of control-plane nodes (also
// the key of their NoSchedule taint).
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

// IsControlPlane says whether a node is a control-plane node.
func IsControlPlane(n *corev1.Node) bool {
	_, cp := n.Labels[controlPlaneLabel]
	return cp
}
