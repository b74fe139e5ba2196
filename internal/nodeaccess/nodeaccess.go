// Package nodeaccess says how skewproof reaches a node's files and
// processes from the host, node by node: through Docker, when the node is a
// container of the local Docker daemon (kind), or not at all (a User-Mode
// Linux node, a cluster elsewhere: the node agent does what needs the
// node). The runner decides once and passes it to the suite processes in
// the run plan (suites/env.PlanNode.Access); a suite process run by hand
// without a plan probes for itself.
package nodeaccess

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Access is how the nodes are reached.
type Access string

const (
	// Docker: every node is a local Docker container (docker exec, docker cp).
	Docker Access = "docker"
	// None: the nodes are not reachable from the host.
	None Access = "none"
)

// Mixed is the Summary of nodes of which some, not all, are reached
// through Docker.
const Mixed Access = "mixed"

// Probe returns the access to each node: Docker when it is a container of
// the local Docker daemon, else None.
func Probe(ctx context.Context, nodes ...string) map[string]Access {
	out := make(map[string]Access, len(nodes))
	for _, n := range nodes {
		out[n] = None
		if err := exec.CommandContext(ctx, "docker", "inspect", "--type", "container", "--format", "{{.Name}}", n).Run(); err == nil {
			out[n] = Docker
		}
	}
	return out
}

// Summary is the access to every node of m at once: Docker when every one
// is reached through Docker, None when none is (or m is empty), else Mixed.
func Summary(m map[string]Access) Access {
	docker := 0
	for _, a := range m {
		if a == Docker {
			docker++
		}
	}
	switch {
	case docker == 0:
		return None
	case docker == len(m):
		return Docker
	}
	return Mixed
}

// Exec runs args in node, a local Docker container (Access Docker), and
// returns its trimmed standard output; an error carries the command's
// standard error.
func Exec(ctx context.Context, node string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", node}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("docker exec %s %s: %v: %s", node, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
