package matrix

import (
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// Verdicts lists every verdict, worst first: the order of filters, counts
// and of a cell that holds several results (the worst wins).
var Verdicts = []skew.Verdict{skew.Fail, skew.Flaky, skew.Deviation, skew.Pass, skew.Skip}

// severity orders verdicts: fail > flaky > deviation > pass > skip; an
// unknown verdict counts as a failure.
func severity(v skew.Verdict) int {
	for i, w := range Verdicts {
		if v == w {
			return len(Verdicts) - i
		}
	}
	return len(Verdicts) + 1
}

// Pair is a column: a kube-apiserver version, a kubelet version and the
// node's container runtimes. Kubelet is "" for a run without any kubelet
// result.
type Pair struct {
	APIServer string `json:"apiserver"`
	Kubelet   string `json:"kubelet"`
	// Runtime is the node's CRI and OCI runtime as `simulate --runtime`
	// reads them ("containerd/1.7.24+runc/1.1.15"); "" where the results do
	// not say (runs before results carried it).
	Runtime string `json:"runtime,omitempty"`
}

// String is "APISERVER/KUBELET" ("APISERVER/-" without a kubelet), then
// "@RUNTIME" when the runtime is known.
func (p Pair) String() string {
	k := p.Kubelet
	if k == "" {
		k = "-"
	}
	s := p.APIServer + "/" + k
	if p.Runtime != "" {
		s += "@" + p.Runtime
	}
	return s
}

// runtimeOf is a result's node runtime as `simulate --runtime` reads it:
// "containerd 1.7.24" and "runc 1.1.15" give "containerd/1.7.24+runc/1.1.15".
func runtimeOf(r reports.Result) string {
	var h skew.HostFacts
	h.Runtime, h.RuntimeVersion, _ = strings.Cut(strings.TrimSpace(r.CRIRuntime), " ")
	h.OCIRuntime, h.OCIRuntimeVersion, _ = strings.Cut(strings.TrimSpace(r.OCIRuntime), " ")
	if h.Runtime == "" && h.OCIRuntime != "" {
		h.Runtime = "?"
	}
	return skew.FormatRuntime(h)
}

// Entry is one result in a cell: a spec of one run on one node.
type Entry struct {
	Run        string       `json:"run"`
	Node       string       `json:"node,omitempty"`
	Verdict    skew.Verdict `json:"verdict"`
	Reason     string       `json:"reason,omitempty"`
	Observed   string       `json:"observed,omitempty"`
	Expected   string       `json:"expected,omitempty"`
	KEPPlanned string       `json:"kepPlanned,omitempty"`
	Outcome    string       `json:"outcome,omitempty"`
	Failure    string       `json:"failure,omitempty"`
	// RuntimeNotResearched: judged against the KEP alone, the node's
	// runtime not read for the rule (reports.Result).
	RuntimeNotResearched string `json:"runtimeNotResearched,omitempty"`
	// Staged: the result observes what skewproof staged itself, not the
	// runtime's own behaviour (reports.Result.Staged).
	Staged string `json:"staged,omitempty"`
}

// Label is the entry's verdict as the reports show it: "pass (staged)"
// for a result of skewproof's own staging (reports.VerdictLabel).
func (e Entry) Label() string {
	return reports.VerdictLabel(reports.Result{Verdict: e.Verdict, Staged: e.Staged})
}

// Why is the entry's reason, else the first line of its failure.
func (e Entry) Why() string {
	if e.Reason != "" {
		return e.Reason
	}
	return shortText(e.Failure)
}

// Cell is one id at one pair: the worst verdict of its entries, and what
// the oracle says about the rule.
type Cell struct {
	ID   string `json:"id"`
	Pair Pair   `json:"pair"`
	// Scope: "apiserver" when the results were observed at the API server
	// (they hold for every kubelet of the run), else "kubelet".
	Scope   string       `json:"scope"`
	Verdict skew.Verdict `json:"verdict"`
	Entries []Entry      `json:"entries"`
	// KEPRef, Source and OracleReason come from the oracle (skew.Expect);
	// empty for ids it does not know (the profiles suite).
	KEPRef       string `json:"kepRef,omitempty"`
	Source       string `json:"source,omitempty"`
	OracleReason string `json:"oracleReason,omitempty"`
}

// Worst is the entry that gives the cell its verdict.
func (c Cell) Worst() Entry {
	w := c.Entries[0]
	for _, e := range c.Entries[1:] {
		if severity(e.Verdict) > severity(w.Verdict) {
			w = e
		}
	}
	return w
}

// Label is the cell's verdict as the reports show it: its worst entry's
// label ("pass (staged)" when that entry observed skewproof's own staging).
func (c Cell) Label() string { return c.Worst().Label() }

// Report is runs joined into one matrix.
type Report struct {
	Runs   []Run
	Pairs  []Pair
	Cells  []Cell // sorted by id, then pair
	Counts reports.Counts
}

type cellKey struct {
	id   string
	pair Pair
}

// Build joins runs into a matrix. A result with a kubelet version goes to
// its (apiserver, kubelet, runtime) pair, the runtime being its node's; a
// result observed at the API server (no kubelet) goes to every pair of its
// run with that apiserver.
func Build(runs []Run) Report {
	cells := map[cellKey]*Cell{}
	for _, run := range runs {
		api := run.apiserverOf()
		type node struct{ kubelet, runtime string }
		var kubelets []node
		seen := map[node]bool{}
		for _, r := range run.Results {
			if k := (node{release.BareVersion(r.Kubelet), runtimeOf(r)}); k.kubelet != "" && !seen[k] {
				seen[k] = true
				kubelets = append(kubelets, k)
			}
		}
		for _, r := range run.Results {
			rapi := release.BareVersion(r.APIServer)
			if rapi == "" {
				rapi = api
			}
			scope, ks := "kubelet", []node{{release.BareVersion(r.Kubelet), runtimeOf(r)}}
			if ks[0].kubelet == "" {
				scope, ks = "apiserver", kubelets
				if len(ks) == 0 {
					ks = []node{{}}
				}
			}
			for _, k := range ks {
				key := cellKey{r.ID, Pair{rapi, k.kubelet, k.runtime}}
				c, ok := cells[key]
				if !ok {
					c = &Cell{ID: r.ID, Pair: key.pair, Scope: scope}
					cells[key] = c
				}
				c.Entries = append(c.Entries, Entry{Run: run.Name, Node: r.Node, Verdict: r.Verdict, Reason: r.Reason,
					Observed: r.Observed, Expected: r.Expected, KEPPlanned: r.KEP, Outcome: r.Outcome, Failure: r.Failure,
					RuntimeNotResearched: r.RuntimeNotResearched, Staged: r.Staged})
			}
		}
	}
	var list []*Cell
	for _, c := range cells {
		list = append(list, c)
	}
	return assemble(runs, list, true)
}

// assemble makes a report of cells: their verdicts (and, with ask, the
// oracle's answer), the pairs they use, the counts, in order.
func assemble(runs []Run, cells []*Cell, ask bool) Report {
	rep := Report{Runs: runs, Counts: reports.Counts{}}
	pairSet := map[Pair]bool{}
	for _, c := range cells {
		pairSet[c.Pair] = true
	}
	for p := range pairSet {
		rep.Pairs = append(rep.Pairs, p)
	}
	sort.Slice(rep.Pairs, func(i, j int) bool { return pairLess(rep.Pairs[i], rep.Pairs[j]) })
	for _, c := range cells {
		c.Verdict = c.Worst().Verdict
		if ask {
			oracle(c, runs)
		}
		rep.Cells = append(rep.Cells, *c)
		rep.Counts[c.Verdict]++
	}
	sort.Slice(rep.Cells, func(i, j int) bool {
		a, b := rep.Cells[i], rep.Cells[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return pairLess(a.Pair, b.Pair)
	})
	return rep
}

// oracle fills in what skew.Expect says about the cell's rule at its pair.
func oracle(c *Cell, runs []Run) {
	rule, ok := skew.RuleByID(c.ID)
	if !ok {
		return
	}
	c.KEPRef, c.Source = rule.KEPRef, rule.Source
	api, err := release.ParseVersion(c.Pair.APIServer)
	if err != nil {
		c.OracleReason = "no oracle answer: " + err.Error()
		return
	}
	kub := api
	if c.Pair.Kubelet != "" {
		if kub, err = release.ParseVersion(c.Pair.Kubelet); err != nil {
			c.OracleReason = "no oracle answer: " + err.Error()
			return
		}
	}
	h := hostOf(c, runs)
	if c.Pair.Runtime != "" {
		if rt, err := skew.ParseRuntime(c.Pair.Runtime); err == nil {
			h.Runtime, h.RuntimeVersion, h.OCIRuntime, h.OCIRuntimeVersion = rt.Runtime, rt.RuntimeVersion, rt.OCIRuntime, rt.OCIRuntimeVersion
		}
	}
	e, err := skew.Expect(c.ID, api, kub, h)
	if err != nil {
		c.OracleReason = "no oracle answer: " + err.Error()
		return
	}
	c.OracleReason = e.Reason
	if e.RuntimeNotResearched != "" {
		c.OracleReason += "; judged against the KEP alone: " + e.RuntimeNotResearched
	}
	if e.Skip != "" {
		c.OracleReason += "; skips here: " + e.Skip
	}
}

// hostOf is the host of the first run of the cell that recorded one.
func hostOf(c *Cell, runs []Run) skew.HostFacts {
	h := skew.DefaultHost
	for _, r := range runs {
		if r.Name == c.Entries[0].Run && r.Record != nil && r.Record.Host != nil {
			h.AppArmor, h.Seccomp = r.Record.Host.AppArmor, r.Record.Host.Seccomp
		}
	}
	return h
}

func pairLess(a, b Pair) bool {
	if c := compareVersions(a.APIServer, b.APIServer); c != 0 {
		return c < 0
	}
	if c := compareVersions(a.Kubelet, b.Kubelet); c != 0 {
		return c < 0
	}
	return a.Runtime < b.Runtime
}

// compareVersions compares semantic versions, falling back to strings.
func compareVersions(a, b string) int {
	va, ea := version.NewVersion(a)
	vb, eb := version.NewVersion(b)
	if ea == nil && eb == nil {
		return va.Compare(vb)
	}
	return strings.Compare(a, b)
}
