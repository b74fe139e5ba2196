// The clusters that exist, found through the Docker daemon, and the error
// for a daemon that does not answer.

package clusters

import (
	"context"
	"sort"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/command"
)

// list returns the names of the clusters that exist (kind clusters on a
// skewproof network or with skewproof node images).
func list(ctx context.Context, h command.Host) ([]string, error) {
	if _, err := h.Docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return nil, command.DockerUnavailableError(err)
	}
	out, err := h.Docker(ctx, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", `{{.Label "io.x-k8s.kind.cluster"}} {{.Networks}}`)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 1 || seen[f[0]] {
			continue
		}
		if len(f) > 1 && !strings.Contains(f[1], networkName(f[0])) {
			continue // a kind cluster that is not ours
		}
		seen[f[0]] = true
		names = append(names, f[0])
	}
	for _, c := range appArmorNodeClusters() {
		if !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	sort.Strings(names)
	return names, nil
}
