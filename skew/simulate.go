package skew

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// Simulate evaluates every rule for one version pair.
func Simulate(apiserver, kubelet *version.Version, host HostFacts) ([]Expectation, error) {
	if err := release.CheckSkew(apiserver, kubelet); err != nil {
		return nil, err
	}
	out := make([]Expectation, 0, len(ruleTable))
	for i := range ruleTable {
		e := ruleTable[i].expect(apiserver, kubelet, host)
		e.Observed = ObservedAt(e.ID, release.MinorOf(apiserver), release.MinorOf(kubelet))
		out = append(out, e)
	}
	return out, nil
}

// Change is one rule whose expected outcome differs across an upgrade.
type Change struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	KEPRef    string    `json:"kepRef"`
	Component Component `json:"component"`
	// Behaviour is true when the upstream outcome changes; false when only
	// the KEP plan (and so the deviation) changes.
	Behaviour bool        `json:"behaviourChanges"`
	Before    Expectation `json:"before"`
	After     Expectation `json:"after"`
}

// Upgrade compares a cluster entirely at from (apiserver and kubelets) with
// one entirely at to, and returns only the rules whose outcome changes for
// workloads: first those whose upstream behaviour changes, then those where
// only the KEP plan changes (a deviation appears or disappears).
func Upgrade(from, to *version.Version, host HostFacts) ([]Change, error) {
	if release.MinorOf(to).Less(release.MinorOf(from)) || (release.MinorOf(to) == release.MinorOf(from) && to.LessThan(from)) {
		return nil, fmt.Errorf("upgrade from v%s to v%s goes backwards; give the older version first", from, to)
	}
	var out []Change
	for i := range ruleTable {
		r := &ruleTable[i]
		b := r.expect(from, from, host)
		a := r.expect(to, to, host)
		if sameObservation(b.Expected, a.Expected) && sameObservation(b.KEPPlanned, a.KEPPlanned) && b.Deviation == a.Deviation {
			continue
		}
		if b.NotResearched != "" && a.NotResearched != "" {
			// Read at neither end: nothing is known to change (the
			// messages differ only in the version they name).
			continue
		}
		out = append(out, Change{ID: r.ID, Title: r.Title, KEPRef: r.KEPRef, Component: r.Component,
			Behaviour: !sameObservation(b.Expected, a.Expected), Before: b, After: a})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Behaviour && !out[j].Behaviour })
	return out, nil
}

// Deviations lists, per rule, every upstream phase that differs from the
// KEP plan for some minor in [from, to].
type DeviationEntry struct {
	ID       string   `json:"id"`
	KEPRef   string   `json:"kepRef"`
	Minors   []string `json:"minors"`
	KEP      string   `json:"kep"`
	Upstream string   `json:"upstream"`
	Source   string   `json:"source"`
}

// Deviations evaluates every rule at every minor in [from, to] whose
// sources were read for it (Rule.Read) and groups the minors where plan and
// upstream differ.
func Deviations(from, to release.Minor) []DeviationEntry { return DeviationsOn(from, to, DefaultHost) }

// DeviationsOn is Deviations on the host's container runtime: where a rule
// has runtime variants, the upstream behaviour is the runtime's
// (Rule.Runtimes); a rule the runtime was not read for lists none (it is
// judged against the KEP alone there, so no deviation can be claimed).
func DeviationsOn(from, to release.Minor, host HostFacts) []DeviationEntry {
	var out []DeviationEntry
	for i := range ruleTable {
		r := &ruleTable[i]
		groups := map[string]*DeviationEntry{}
		var order []string
		read := r.Read.Window()
		for m := from; !to.Less(m); m = (release.Minor{Major: m.Major, Minor: m.Minor + 1}) {
			if !read.ContainsMinor(m) {
				continue // not researched: no deviation can be claimed
			}
			v := release.MustParseVersion(fmt.Sprintf("%d.%d.0", m.Major, m.Minor))
			kep, up := findPhase(r.KEP, v), findPhase(r.Upstream, v)
			source := r.Source
			if len(r.Runtimes) > 0 {
				p, rtSource, unread := r.runtimePhase(host, v)
				if unread != "" {
					continue
				}
				if !reflect.DeepEqual(p, up) {
					up, source = p, r.Source+"; on this runtime: "+rtSource
				}
			}
			if up.Unresearched || Satisfies(up.Obs, kep.Obs) {
				continue
			}
			key := kep.Name + "\x00" + up.Name
			g, ok := groups[key]
			if !ok {
				g = &DeviationEntry{ID: r.ID, KEPRef: r.KEPRef, KEP: kep.Name + ": " + kep.Obs.Summary, Upstream: up.Name + ": " + up.Obs.Summary, Source: source}
				groups[key] = g
				order = append(order, key)
			}
			g.Minors = append(g.Minors, m.String())
		}
		for _, k := range order {
			out = append(out, *groups[k])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
