package harness

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/skewproof/skewproof/clusters/kubeclient"
	"github.com/skewproof/skewproof/internal/nodeaccess"
)

// NodeShell runs a shell script on a node, with args as $1, $2, …, through
// the node access (Env.NodeAccess: docker exec into the node's container),
// and returns its trimmed standard output. Without access to the nodes it
// fails: a spec that needs it calls NeedNodeAccess first.
func NodeShell(ctx context.Context, node, script string, args ...string) (string, error) {
	if Env.NodeAccess != nodeaccess.Docker {
		return "", fmt.Errorf("no access to node %s from this host (node access %q)", node, Env.NodeAccess)
	}
	return nodeaccess.Exec(ctx, node, append([]string{"sh", "-c", script, "sh"}, args...)...)
}

// NeedNodeAccess skips the spec unless the nodes' files can be reached
// from this host (NodeShell).
func NeedNodeAccess() {
	if Env.NodeAccess != nodeaccess.Docker {
		Skip("needs docker access to the node containers (the run plan's nodeAccess: docker) to look at or break node files")
	}
}

// PodExec runs a command in a container of a pod of namespace (one a suite
// deployed itself, outside the spec's namespace: Scenario.Exec is for those)
// through the API server (pods/exec), and returns its standard output and
// standard error.
func PodExec(ctx context.Context, namespace, pod, container string, cmd ...string) (string, string, error) {
	return kubeclient.PodExec(ctx, Env.Config, Env.Client, namespace, pod, container, cmd...)
}
