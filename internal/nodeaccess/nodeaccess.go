// Package nodeaccess says how skewproof reaches its nodes' files and
// processes from the host: through Docker, when every node is a container
// of the local Docker daemon (kind), or not at all (a cluster elsewhere:
// the node agent does what needs the node). The runner decides once and
// passes it to the suite processes in the run plan (suites/env.Plan); a
// suite process run by hand without a plan probes for itself.
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

// Probe returns Docker when every node is a container of the local Docker
// daemon, else None (also for no node).
func Probe(ctx context.Context, nodes ...string) Access {
	if len(nodes) == 0 {
		return None
	}
	for _, n := range nodes {
		if err := exec.CommandContext(ctx, "docker", "inspect", "--type", "container", "--format", "{{.Name}}", n).Run(); err != nil {
			return None
		}
	}
	return Docker
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
