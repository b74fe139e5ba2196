package runner

import (
	"slices"
	"sort"

	"github.com/skewproof/skewproof/internal/nodefacts"

	corev1 "k8s.io/api/core/v1"

	senv "github.com/skewproof/skewproof/suites/env"
)

// untestable returns, for each node the kubelet rules would run on
// (tested, the plan's workers) that cannot be tested now, why: the node is
// not Ready (its Ready condition's status, reason and message), or, on a
// cluster skewproof brought up itself, cordoned. On an existing cluster a
// cordoned but Ready node is tested: the specs bind their pods with
// nodeName, which the scheduler's cordon does not apply to (as for
// DaemonSet pods); cordoned lists it.
func untestable(nodes []corev1.Node, tested []senv.PlanNode, own bool) (out map[string]string, cordoned []string) {
	out = map[string]string{}
	for _, n := range nodes {
		if !slices.ContainsFunc(tested, func(t senv.PlanNode) bool { return t.Name == n.Name }) {
			continue
		}
		if why := nodefacts.NotReady(&n); why != "" {
			out[n.Name] = why
			continue
		}
		if n.Spec.Unschedulable {
			if own {
				out[n.Name] = "node " + n.Name + " is cordoned (unschedulable)"
				continue
			}
			cordoned = append(cordoned, n.Name)
		}
	}
	return out, cordoned
}

// untestableRemedy is what to do about nodes that cannot be tested.
func untestableRemedy(own bool) string {
	if own {
		return "skewproof brought this cluster up and one of its workers is not usable: the set-up broke; see the node's kubelet log (docker exec NODE journalctl -u kubelet) or run again"
	}
	return "make the node Ready (start its kubelet, fix its runtime or network) or remove it from the cluster; to judge the other nodes and still exit 0, allow it with --allowed-not-ready-nodes N"
}

// DescribeNotTested lists the reasons of the nodes a run could not test
// (Outcome.NotTested), in node order.
func DescribeNotTested(m map[string]string) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, m[n])
	}
	return out
}
