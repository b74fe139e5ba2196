package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// WriteObserved renders docs/oracle/observed.md: for every minor where a
// rule's upstream window changes in the annotation eras
// (skew.HistoryChanges), the clusters that judged it on each side, from
// the ledger of real runs (skew.ObservedVerdicts); then the ledger's runs.
func WriteObserved(w io.Writer) error {
	ledger := skew.ObservedVerdicts()
	fmt.Fprint(w, `# The oracle observed on real clusters

Generated from the ledger `+"`skew/observed.json`"+` by `+"`go test ./reports -run TestObservedDocIsCurrent -update`"+`;
do not edit. The ledger holds every verdict a real run judged (pass or deviation, on the
node's runtime and kernel), added from a run's `+"`summary.json`"+` with
`+"`go run ./hack/observed -run NAME summary.json`"+`. `+"`TestObservedVerdictsAgreeWithOracle`"+`
(skew) checks each against the oracle at its versions, so a window moved against what a
cluster showed fails there. `+"`skewproof simulate`"+` marks the answers a cluster observed.

## Where the windows change, both sides

Each row is a minor where a rule's upstream window changes, up to the end of its era
(seccomp v1.27, AppArmor v1.31), at the component whose version decides it; the history
preset (`+"`make conformance HISTORY=1`"+`) puts a cluster on both sides of each. A cell lists
the clusters (kube-apiserver/kubelet) that judged the rule there, with the verdict.

| rule | component | changes at | the minor before: observed on | the minor of the change: observed on |
| --- | --- | --- | --- | --- |
`)
	both := 0
	changes := skew.HistoryChanges()
	for _, c := range changes {
		before := release.Minor{Major: c.At.Major, Minor: c.At.Minor - 1}
		b, a := observedOn(ledger, c, before), observedOn(ledger, c, c.At)
		if b != "" && a != "" {
			both++
		}
		fmt.Fprintf(w, "| `%s` | %s | v%s | %s | %s |\n", c.ID, c.Component, c.At, orNot(b), orNot(a))
	}
	fmt.Fprintf(w, "\n%d of %d changes judged on a real cluster on both sides (or not applicable on one).\n\n## The runs\n\n| run | clusters | pass | deviation |\n| --- | --- | --- | --- |\n", both, len(changes))
	type tally struct {
		clusters  []string
		pass, dev int
	}
	runs := map[string]*tally{}
	var names []string
	for _, o := range ledger {
		t := runs[o.Run]
		if t == nil {
			t = &tally{}
			runs[o.Run] = t
			names = append(names, o.Run)
		}
		if !slices.Contains(t.clusters, o.Cluster()) {
			t.clusters = append(t.clusters, o.Cluster())
		}
		if o.Verdict == skew.Deviation {
			t.dev++
		} else {
			t.pass++
		}
	}
	slices.Sort(names)
	for _, n := range names {
		t := runs[n]
		fmt.Fprintf(w, "| %s | %s | %d | %d |\n", n, strings.Join(t.clusters, ", "), t.pass, t.dev)
	}
	if len(names) == 0 {
		fmt.Fprintln(w, "| (none yet) | | | |")
	}
	return nil
}

// observedOn lists the clusters of the ledger that judged the change's
// rule with its component at minor m.
func observedOn(ledger []skew.ObservedVerdict, c skew.WindowChange, m release.Minor) string {
	var out []string
	for _, o := range ledger {
		v := o.Apiserver
		if c.Component == skew.Kubelet {
			v = o.KubeletVersion()
		}
		if o.ID != c.ID || release.MinorOf(release.MustParseVersion(v)) != m {
			continue
		}
		s := string(o.Verdict) + " on " + o.Cluster()
		if o.AppArmor && strings.HasPrefix(o.ID, "apparmor/") && c.Component == skew.Kubelet {
			s += " (AppArmor node)"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		// A side where the rule does not apply is judged skip, and that
		// skip is what a cluster shows there.
		if na := notApplicable(c.ID, m); na != "" {
			return "does not apply there (" + na + ")"
		}
	}
	return strings.Join(out, "; ")
}

// notApplicable is why rule id does not apply at minor m, if it does not.
func notApplicable(id string, m release.Minor) string {
	v := release.MustParseVersion(fmt.Sprintf("%d.%d.0", m.Major, m.Minor))
	e, err := skew.Expect(id, v, v, skew.DefaultHost)
	if err != nil {
		return ""
	}
	return e.Expected.NotApplicable
}

func orNot(s string) string {
	if s == "" {
		return "not yet"
	}
	return s
}
