package runner

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

func node(name string, controlPlane, cordoned bool, ready *corev1.NodeCondition) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{Unschedulable: cordoned}}
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	if ready != nil {
		n.Status.Conditions = []corev1.NodeCondition{*ready}
	}
	return n
}

var (
	readyTrue    = &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	kubeletGone  = &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}
	runtimeBroke = &corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "container runtime is down"}
)

// Every worker that is not Ready is named with its Ready condition; a
// cordoned worker cannot be tested on skewproof's own cluster, and is
// tested (and listed) on an existing one; control planes are not tested
// when there are workers.
func TestUntestable(t *testing.T) {
	nodes := []corev1.Node{
		node("cp", true, false, kubeletGone),
		node("ok", false, false, readyTrue),
		node("stopped", false, false, kubeletGone),
		node("broken", false, false, runtimeBroke),
		node("never", false, false, nil),
		node("cordoned", false, true, readyTrue),
	}
	for _, own := range []bool{false, true} {
		got, cordoned := untestable(nodes, planWorkers(t, nodes), own)
		want := map[string]string{
			"stopped": "node stopped is not Ready (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)",
			"broken":  "node broken is not Ready (Ready=False, KubeletNotReady: container runtime is down)",
			"never":   "node never is not Ready (it reports no Ready condition",
		}
		if own {
			want["cordoned"] = "node cordoned is cordoned (unschedulable)"
		}
		if len(got) != len(want) {
			t.Errorf("own %v: untestable %v, want the nodes of %v", own, got, want)
		}
		for n, w := range want {
			if !strings.HasPrefix(got[n], w) {
				t.Errorf("own %v: node %s: %q, want %q", own, n, got[n], w)
			}
		}
		if wantCordoned := !own; (len(cordoned) == 1 && cordoned[0] == "cordoned") != wantCordoned {
			t.Errorf("own %v: cordoned and tested: %v", own, cordoned)
		}
	}
	// A cluster of control planes only: they are the nodes tested.
	cps := []corev1.Node{node("cp", true, false, kubeletGone)}
	if got, _ := untestable(cps, planWorkers(t, cps), false); got["cp"] == "" {
		t.Errorf("single control plane not Ready: %v", got)
	}
	if d := DescribeNotTested(map[string]string{"b": "B", "a": "A"}); strings.Join(d, ",") != "A,B" {
		t.Errorf("DescribeNotTested = %v, want node order", d)
	}
}

// planWorkers are the workers of the plan of nodes.
func planWorkers(t *testing.T, nodes []corev1.Node) []senv.PlanNode {
	for i := range nodes {
		nodes[i].Status.NodeInfo.KubeletVersion = "v1.37.2"
	}
	pn, err := senv.NodesOf(nodes, skew.HostFacts{}, "")
	if err != nil {
		t.Fatal(err)
	}
	return senv.Plan{Nodes: pn}.Workers()
}
