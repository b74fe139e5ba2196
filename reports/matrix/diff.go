package matrix

import (
	"sort"

	"github.com/skewproof/skewproof/skew"
)

// Change kinds, in the order a diff lists them.
const (
	NewlyFailing  = "newly failing"
	NewlyFlaky    = "newly flaky"
	NewDeviation  = "new deviation"
	NewlyPassing  = "newly passing"
	VerdictChange = "verdict changed"
	Appeared      = "appeared"
	Disappeared   = "disappeared"
)

// Kinds lists the change kinds in order.
var Kinds = []string{NewlyFailing, NewlyFlaky, NewDeviation, NewlyPassing, VerdictChange, Appeared, Disappeared}

// Change is one cell (id at a pair) whose verdict differs between two
// reports; Old or New is "" when the cell is absent on that side.
type Change struct {
	Kind   string       `json:"kind"`
	ID     string       `json:"id"`
	Pair   Pair         `json:"pair"`
	Old    skew.Verdict `json:"old,omitempty"`
	New    skew.Verdict `json:"new,omitempty"`
	Reason string       `json:"reason,omitempty"`
}

// Diff is what changed from Old to New.
type Diff struct {
	Old     string   `json:"old"`
	New     string   `json:"new"`
	Changes []Change `json:"changes"`
	// Same counts the cells present in both with the same verdict.
	Same int `json:"unchanged"`
	// IDsAppeared and IDsDisappeared are ids present on one side only.
	IDsAppeared    []string `json:"idsAppeared"`
	IDsDisappeared []string `json:"idsDisappeared"`
}

// Count is the number of changes of a kind.
func (d Diff) Count(kind string) int {
	n := 0
	for _, c := range d.Changes {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// Of is the changes of one kind.
func (d Diff) Of(kind string) []Change {
	var out []Change
	for _, c := range d.Changes {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// Compare compares two reports cell by cell (id × apiserver/kubelet pair).
func Compare(oldName string, old Report, newName string, cur Report) Diff {
	d := Diff{Old: oldName, New: newName, Changes: []Change{}, IDsAppeared: []string{}, IDsDisappeared: []string{}}
	oldCells := map[cellKey]Cell{}
	oldIDs, newIDs := map[string]bool{}, map[string]bool{}
	for _, c := range old.Cells {
		oldCells[cellKey{c.ID, c.Pair}] = c
		oldIDs[c.ID] = true
	}
	seen := map[cellKey]bool{}
	for _, c := range cur.Cells {
		k := cellKey{c.ID, c.Pair}
		seen[k] = true
		newIDs[c.ID] = true
		o, ok := oldCells[k]
		ch := Change{ID: c.ID, Pair: c.Pair, New: c.Verdict, Reason: c.Worst().Why()}
		switch {
		case !ok:
			ch.Kind = Appeared
		case o.Verdict == c.Verdict:
			d.Same++
			continue
		default:
			ch.Old, ch.Kind = o.Verdict, kindOf(c.Verdict)
		}
		d.Changes = append(d.Changes, ch)
	}
	for _, c := range old.Cells {
		if !seen[cellKey{c.ID, c.Pair}] {
			d.Changes = append(d.Changes, Change{Kind: Disappeared, ID: c.ID, Pair: c.Pair, Old: c.Verdict, Reason: c.Worst().Why()})
		}
	}
	for id := range newIDs {
		if !oldIDs[id] {
			d.IDsAppeared = append(d.IDsAppeared, id)
		}
	}
	for id := range oldIDs {
		if !newIDs[id] {
			d.IDsDisappeared = append(d.IDsDisappeared, id)
		}
	}
	sort.Strings(d.IDsAppeared)
	sort.Strings(d.IDsDisappeared)
	kindRank := map[string]int{}
	for i, k := range Kinds {
		kindRank[k] = i
	}
	sort.SliceStable(d.Changes, func(i, j int) bool {
		a, b := d.Changes[i], d.Changes[j]
		if a.Kind != b.Kind {
			return kindRank[a.Kind] < kindRank[b.Kind]
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return pairLess(a.Pair, b.Pair)
	})
	return d
}

func kindOf(v skew.Verdict) string {
	switch v {
	case skew.Fail:
		return NewlyFailing
	case skew.Flaky:
		return NewlyFlaky
	case skew.Deviation:
		return NewDeviation
	case skew.Pass:
		return NewlyPassing
	}
	return VerdictChange
}
