package harness

import (
	"context"
	"fmt"

	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/internal/nodeaccess"
)

// NodeShell runs a shell script on a node, with args as $1, $2, …, through
// the node's access (Node.Access: docker exec into the node's container),
// and returns its trimmed standard output. Without access to that node it
// fails: a spec that needs it picks a node that has it (NodeWithAccess).
func NodeShell(ctx context.Context, node, script string, args ...string) (string, error) {
	if a := accessOf(node); a != nodeaccess.Docker {
		return "", fmt.Errorf("no access to node %s from this host (node access %q)", node, a)
	}
	return nodeaccess.Exec(ctx, node, append([]string{"sh", "-c", script, "sh"}, args...)...)
}

// accessOf is the access to the node of that name (Env.Nodes).
func accessOf(node string) nodeaccess.Access {
	for _, n := range Env.Nodes {
		if n.Name == node {
			return n.Access
		}
	}
	return nodeaccess.None
}

// NeedsNodeAccess is the reason a spec gives when no node it may use can
// be reached from this host.
const NeedsNodeAccess = "needs docker access to a node container (the run plan's nodes[].access: docker) to look at or break node files"

// WithAccess are the nodes of nodes whose files this host reaches
// (NodeShell), in order.
func WithAccess(nodes []Node) []Node {
	var out []Node
	for _, n := range nodes {
		if n.Access == nodeaccess.Docker {
			out = append(out, n)
		}
	}
	return out
}

// NodeWithAccess is the node of nodes that spec id breaks or looks into
// through NodeShell: the first worker with access, else the first node
// with access. When none has, the spec stops under the own-cluster rule
// (MissingSetUp): on skewproof's own cluster its kind nodes have it, so
// that fails; elsewhere it is a fact of the cluster, a skip.
func NodeWithAccess(id string, nodes []Node) Node {
	n, ok := FirstWithAccess(nodes)
	if !ok {
		MissingSetUp(id, nil, NeedsNodeAccess)
	}
	return n
}

// FirstWithAccess is NodeWithAccess's choice; ok is false when no node of
// nodes can be reached.
func FirstWithAccess(nodes []Node) (Node, bool) {
	with := WithAccess(nodes)
	for _, n := range with {
		if !n.ControlPlane {
			return n, true
		}
	}
	if len(with) > 0 {
		return with[0], true
	}
	return Node{}, false
}

// PodExec runs a command in a container of a pod of namespace (one a suite
// deployed itself, outside the spec's namespace: Scenario.Exec is for those)
// through the API server (pods/exec), and returns its standard output and
// standard error.
func PodExec(ctx context.Context, namespace, pod, container string, cmd ...string) (string, string, error) {
	return kubeclient.PodExec(ctx, Env.Config, Env.Client, namespace, pod, container, cmd...)
}
