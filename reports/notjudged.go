package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skewproof/skewproof/skew"
)

// NotJudgedForHost says which specs of rs were not judged for want of
// something their node's host lacks (SkipHost: AppArmor in the kernel,
// or a kernel without it), one line per reason: the reason, the nodes and
// the catalogue ids. None when every such spec was judged.
func NotJudgedForHost(rs []Result) []string {
	type group struct{ nodes, ids []string }
	byReason := map[string]*group{}
	for _, r := range rs {
		if r.Verdict != skew.Skip || r.SkipKind != SkipHost {
			continue
		}
		g := byReason[r.Reason]
		if g == nil {
			g = &group{}
			byReason[r.Reason] = g
		}
		if n := where(r.Node); !slices.Contains(g.nodes, n) {
			g.nodes = append(g.nodes, n)
		}
		if !slices.Contains(g.ids, r.ID) {
			g.ids = append(g.ids, r.ID)
		}
	}
	var out []string
	for reason, g := range byReason {
		sort.Strings(g.nodes)
		sort.Strings(g.ids)
		out = append(out, fmt.Sprintf("%s: %d ids on %s: %s", reason, len(g.ids), strings.Join(g.nodes, ", "), strings.Join(g.ids, ", ")))
	}
	sort.Strings(out)
	return out
}
