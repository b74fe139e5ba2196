package matrix

import (
	"sort"
	"strings"

	"github.com/skewproof/skewproof/skew"
)

// Family is a KEP (or the profiles suite): the first segment of an id.
type Family struct {
	Name string `json:"name"`
	// Label names the specification, e.g. "KEP-135 seccomp".
	Label string `json:"label"`
}

var families = []Family{
	{"seccomp", "KEP-135 seccomp"},
	{"apparmor", "KEP-24 AppArmor"},
	{"profiles", "profiles (skewproof node agent; no KEP)"},
}

func familyOf(id string) Family {
	name, _, _ := strings.Cut(id, "/")
	for _, f := range families {
		if f.Name == name {
			return f
		}
	}
	return Family{Name: name, Label: name}
}

// Row is one id: its cells in the order of Report.Pairs (nil where the
// id has no result at that pair).
type Row struct {
	ID     string
	Title  string
	KEPRef string
	Worst  skew.Verdict
	Cells  []*Cell
}

// Group is the rows of one id prefix (seccomp/api, apparmor/failure...),
// with the KEP sections its rules cite.
type Group struct {
	Family  Family
	Name    string
	Section string
	Rows    []Row
}

// Groups lays the cells out: families in the order seccomp, apparmor,
// profiles (others after, by name); groups of a family in catalogue order;
// rows of a group worst verdict first, then in catalogue order.
func (rep Report) Groups() []Group {
	order := map[string]int{}
	for i, r := range skew.Rules() {
		order[r.ID] = i
	}
	rank := func(id string) int {
		if i, ok := order[id]; ok {
			return i
		}
		return len(order)
	}
	col := map[Pair]int{}
	for i, p := range rep.Pairs {
		col[p] = i
	}
	rows := map[string]*Row{}
	var ids []string
	for i := range rep.Cells {
		c := &rep.Cells[i]
		r, ok := rows[c.ID]
		if !ok {
			r = &Row{ID: c.ID, Worst: c.Verdict, Cells: make([]*Cell, len(rep.Pairs))}
			if rule, ok := skew.RuleByID(c.ID); ok {
				r.Title, r.KEPRef = rule.Title, rule.KEPRef
			}
			rows[c.ID] = r
			ids = append(ids, c.ID)
		}
		r.Cells[col[c.Pair]] = c
		if severity(c.Verdict) > severity(r.Worst) {
			r.Worst = c.Verdict
		}
	}
	groups := map[string]*Group{}
	var names []string
	for _, id := range ids {
		name := groupOf(id)
		g, ok := groups[name]
		if !ok {
			g = &Group{Family: familyOf(id), Name: name}
			groups[name] = g
			names = append(names, name)
		}
		g.Rows = append(g.Rows, *rows[id])
	}
	famRank := func(f string) int {
		for i, x := range families {
			if x.Name == f {
				return i
			}
		}
		return len(families)
	}
	groupRank := func(g *Group) int {
		best := len(order)
		for _, r := range g.Rows {
			best = min(best, rank(r.ID))
		}
		return best
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := groups[names[i]], groups[names[j]]
		if fa, fb := famRank(a.Family.Name), famRank(b.Family.Name); fa != fb || a.Family.Name != b.Family.Name {
			if fa != fb {
				return fa < fb
			}
			return a.Family.Name < b.Family.Name
		}
		if ra, rb := groupRank(a), groupRank(b); ra != rb {
			return ra < rb
		}
		return a.Name < b.Name
	})
	var out []Group
	for _, n := range names {
		g := groups[n]
		sort.SliceStable(g.Rows, func(i, j int) bool {
			a, b := g.Rows[i], g.Rows[j]
			if sa, sb := severity(a.Worst), severity(b.Worst); sa != sb {
				return sa > sb
			}
			if ra, rb := rank(a.ID), rank(b.ID); ra != rb {
				return ra < rb
			}
			return a.ID < b.ID
		})
		g.Section = sections(g.Rows)
		out = append(out, *g)
	}
	return out
}

// groupOf is the id's first two segments ("seccomp/api").
func groupOf(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if len(parts) < 3 {
		return parts[0]
	}
	return parts[0] + "/" + parts[1]
}

// sections lists the distinct top-level KEP sections the rows cite, e.g.
// "KEP-135 §Failure and Fallback Strategy".
func sections(rows []Row) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, part := range strings.Split(r.KEPRef, ";") {
			s := strings.TrimSpace(part)
			if i := strings.Index(s, "§"); i >= 0 {
				s = s[i:]
			}
			if f := strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == '(' || c == '›' }); len(f) > 0 {
				s = strings.TrimSpace(f[0])
			}
			if strings.HasPrefix(s, "§") && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	kep, _, _ := strings.Cut(rows[0].KEPRef, " ")
	return kep + " " + strings.Join(out, " · ")
}

// Attention lists the failing cells, then the flaky ones (by id and pair).
func (rep Report) Attention() []Cell {
	var out []Cell
	for _, v := range []skew.Verdict{skew.Fail, skew.Flaky} {
		for _, c := range rep.Cells {
			if c.Verdict == v {
				out = append(out, c)
			}
		}
	}
	return out
}
