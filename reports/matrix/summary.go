package matrix

import (
	"io"
	"sort"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// SummaryFile is the machine-readable summary of a report.
const SummaryFile = "summary.json"

// Summary is summary.json: the runs, the pairs, the counts of cells by
// verdict and every cell.
type Summary struct {
	Runs   []RunSummary         `json:"runs"`
	Pairs  []Pair               `json:"pairs"`
	Counts map[skew.Verdict]int `json:"counts"`
	Cells  []CellSummary        `json:"cells"`
}

// RunSummary is one input run.
type RunSummary struct {
	Name      string               `json:"name"`
	Source    string               `json:"source"`
	Cluster   string               `json:"cluster,omitempty"`
	APIServer string               `json:"apiserver,omitempty"`
	Kubelets  []string             `json:"kubelets,omitempty"`
	Specs     int                  `json:"specs"`
	Counts    map[skew.Verdict]int `json:"counts"`
}

// CellSummary is one id at one pair: the verdict and, from the result that
// gave it, the reason, node, observed, expected and KEP-planned outcome;
// every result in Entries; the oracle's KEP reference, source and reason.
type CellSummary struct {
	ID           string       `json:"id"`
	APIServer    string       `json:"apiserver"`
	Kubelet      string       `json:"kubelet"`
	Runtime      string       `json:"runtime,omitempty"`
	Scope        string       `json:"scope"`
	Verdict      skew.Verdict `json:"verdict"`
	Reason       string       `json:"reason,omitempty"`
	Node         string       `json:"node,omitempty"`
	Observed     string       `json:"observed,omitempty"`
	Expected     string       `json:"expected,omitempty"`
	KEPPlanned   string       `json:"kepPlanned,omitempty"`
	KEPRef       string       `json:"kepRef,omitempty"`
	Source       string       `json:"source,omitempty"`
	OracleReason string       `json:"oracleReason,omitempty"`
	Entries      []Entry      `json:"entries"`
}

// Summarize makes the summary of rep.
func Summarize(rep Report) Summary {
	s := Summary{Pairs: rep.Pairs, Counts: map[skew.Verdict]int(rep.Counts), Cells: []CellSummary{}}
	if s.Pairs == nil {
		s.Pairs = []Pair{}
	}
	for _, r := range rep.Runs {
		rs := RunSummary{Name: r.Name, Source: r.Source, APIServer: r.apiserverOf(), Specs: len(r.Results),
			Counts: map[skew.Verdict]int(reports.Count(r.Results))}
		if r.Record != nil {
			rs.Cluster = r.Record.Cluster
		}
		seen := map[string]bool{}
		for _, res := range r.Results {
			if k := release.BareVersion(res.Kubelet); k != "" && !seen[k] {
				seen[k] = true
				rs.Kubelets = append(rs.Kubelets, k)
			}
		}
		sort.Slice(rs.Kubelets, func(i, j int) bool { return compareVersions(rs.Kubelets[i], rs.Kubelets[j]) < 0 })
		s.Runs = append(s.Runs, rs)
	}
	for _, c := range rep.Cells {
		w := c.Worst()
		s.Cells = append(s.Cells, CellSummary{ID: c.ID, APIServer: c.Pair.APIServer, Kubelet: c.Pair.Kubelet, Runtime: c.Pair.Runtime, Scope: c.Scope,
			Verdict: c.Verdict, Reason: w.Reason, Node: w.Node, Observed: w.Observed, Expected: w.Expected, KEPPlanned: w.KEPPlanned,
			KEPRef: c.KEPRef, Source: c.Source, OracleReason: c.OracleReason, Entries: c.Entries})
	}
	return s
}

// WriteSummary writes rep's summary as indented JSON.
func WriteSummary(w io.Writer, rep Report) error {
	return reports.WriteJSON(w, Summarize(rep))
}
