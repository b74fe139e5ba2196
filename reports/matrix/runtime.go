package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/skewproof/skewproof/skew/release"
)

// RuntimeMatches says whether a pair's runtime ("containerd/1.7.24+runc/1.1.15")
// is selected by sel: NAME[/VERSION] matches the CRI or the OCI runtime of
// that name ("crun", "containerd/2", where a version matches itself and
// the releases it is a prefix of, "2" matching 2.4.2); CRI+OCI matches both
// parts, either side may be empty ("+crun", "containerd/2+").
func RuntimeMatches(runtime, sel string) bool {
	cri, oci, _ := strings.Cut(runtime, "+")
	scri, soci, both := strings.Cut(strings.TrimSpace(sel), "+")
	if !both {
		return part(cri, scri) || part(oci, scri)
	}
	return (scri == "" || part(cri, scri)) && (soci == "" || part(oci, soci))
}

// part matches NAME[/VERSION] against a selector of the same form.
func part(have, sel string) bool {
	name, ver, _ := strings.Cut(have, "/")
	sname, sver, _ := strings.Cut(sel, "/")
	if sname == "" || !strings.EqualFold(name, sname) {
		return false
	}
	sver = release.BareVersion(sver)
	return sver == "" || ver == sver || strings.HasPrefix(ver, sver+".")
}

// SelectRuntime is rep restricted to the cells whose runtime sel selects
// (RuntimeMatches), with the runtime taken out of their pairs, so that two
// selections compare cell by cell: "what changes if I move from runc to
// crun", across two runs or within one run on a mixed cluster. Cells that
// become one (sel selects several runtimes) hold the entries of all.
func SelectRuntime(rep Report, sel string) (Report, error) {
	merged := map[cellKey]*Cell{}
	var cells []*Cell
	seen := map[cellKey]map[Entry]bool{}
	for _, c := range rep.Cells {
		if !RuntimeMatches(c.Pair.Runtime, sel) {
			continue
		}
		k := cellKey{c.ID, Pair{APIServer: c.Pair.APIServer, Kubelet: c.Pair.Kubelet}}
		m, ok := merged[k]
		if !ok {
			m = &Cell{ID: c.ID, Pair: k.pair, Scope: c.Scope, KEPRef: c.KEPRef, Source: c.Source, OracleReason: c.OracleReason}
			merged[k], seen[k] = m, map[Entry]bool{}
			cells = append(cells, m)
		}
		// A result observed at the API server is in every pair of its run.
		for _, e := range c.Entries {
			if !seen[k][e] {
				seen[k][e] = true
				m.Entries = append(m.Entries, e)
			}
		}
	}
	if len(cells) == 0 {
		return Report{}, fmt.Errorf("no result ran on a runtime %q selects; the runtimes there: %s", sel, runtimesOf(rep))
	}
	return assemble(rep.Runs, cells, false), nil
}

// runtimesOf lists the distinct runtimes of rep's pairs.
func runtimesOf(rep Report) string {
	set := map[string]bool{}
	for _, p := range rep.Pairs {
		r := p.Runtime
		if r == "" {
			r = "(not recorded)"
		}
		set[r] = true
	}
	var out []string
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
