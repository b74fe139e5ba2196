package nodefacts

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// controlPlaneLabel is kubeadm's role label of control-plane nodes (also
// the key of their NoSchedule taint).
const controlPlaneLabel = "node-role.kubernetes.io/control-plane"

// LegacyControlPlaneLabel is the role label (and taint key) kubeadm gave
// control-plane nodes before controlPlaneLabel: alone before v1.20, beside
// it in v1.20-v1.23, gone from v1.24 (cmd/kubeadm/app/constants,
// LabelNodeRoleOldControlPlane).
const LegacyControlPlaneLabel = "node-role.kubernetes.io/master"

// IsControlPlane says whether a node is a control-plane node.
func IsControlPlane(n *corev1.Node) bool {
	_, cp := n.Labels[controlPlaneLabel]
	_, legacy := n.Labels[LegacyControlPlaneLabel]
	return cp || legacy
}

// NotReady says why a node is not Ready, with its Ready condition's status,
// reason and message ("node w1 is not Ready (Ready=Unknown,
// NodeStatusUnknown: Kubelet stopped posting node status.)"); "" when it is
// Ready.
func NotReady(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ""
		}
		why := "node " + n.Name + " is not Ready (Ready=" + string(c.Status)
		if c.Reason != "" {
			why += ", " + c.Reason
		}
		if m := strings.TrimSpace(c.Message); m != "" {
			why += ": " + m
		}
		return why + ")"
	}
	return "node " + n.Name + " is not Ready (it reports no Ready condition: its kubelet never registered its status)"
}
