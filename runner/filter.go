package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// IDLabel is the Ginkgo label of a catalogue id ('/' is not allowed in labels).
func IDLabel(id string) string { return strings.ReplaceAll(strings.TrimSpace(id), "/", "-") }

// IDFilter selects the specs of ids, on the given nodes when nodes[id] is set.
func IDFilter(ids []string, nodes map[string][]string) string {
	var alts []string
	for _, id := range ids {
		f := IDLabel(id)
		if ns := nodes[id]; len(ns) > 0 {
			f = "(" + f + " && node: containsAny {" + strings.Join(ns, ", ") + "})"
		}
		alts = append(alts, f)
	}
	return strings.Join(alts, " || ")
}

// FailedFilter selects the specs that failed in a JUnit file of an earlier
// run, on the nodes they failed on.
func FailedFilter(junit string) (string, error) {
	suites, err := reports.ReadJUnitFiles(junit)
	if err != nil {
		return "", err
	}
	var ids []string
	nodes := map[string][]string{}
	seen := map[string]bool{}
	for _, s := range suites {
		for _, r := range s.Results {
			if r.Verdict != skew.Fail || r.ID == "" {
				continue
			}
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
			if r.Node != "" {
				nodes[r.ID] = append(nodes[r.ID], r.Node)
			} else {
				nodes[r.ID] = nil
			}
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no failed spec in %s", junit)
	}
	// An id that failed at cluster level runs everywhere it applies.
	for _, id := range ids {
		for _, n := range nodes[id] {
			if n == "" {
				nodes[id] = nil
			}
		}
	}
	return IDFilter(ids, nodes), nil
}

// ParseSuites reads a comma-separated list of suites (empty items are
// ignored) and refuses a name that is not one of Suites.
func ParseSuites(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(Suites, n) {
			return nil, fmt.Errorf("%q is not a suite (%s)", n, strings.Join(Suites, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}
