// The clusters that exist, found through the Docker daemon, and the error
// for a daemon that does not answer.

package clusters

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// list returns the names of the clusters that exist (kind clusters on a
// skewproof network or with skewproof node images).
func list(ctx context.Context) ([]string, error) {
	if _, err := docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return nil, dockerUnavailableError(err)
	}
	out, err := docker(ctx, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", `{{.Label "io.x-k8s.kind.cluster"}} {{.Networks}}`)
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
		if len(f) > 1 && !strings.Contains(f[1], NetworkName(f[0])) {
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

// dockerUnavailableError is the one-line error for a Docker daemon that does
// not answer.
func dockerUnavailableError(err error) error {
	return fmt.Errorf("the Docker daemon is not reachable (%s); start it, e.g. 'sudo hack/setup-host.sh'", errSummary(err.Error()))
}

// errSummary is the gist of an error message: its last ": " part when that
// says something, on one line.
func errSummary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, ": "); i > 0 && len(s)-i > 10 {
		s = s[i+2:]
	}
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
