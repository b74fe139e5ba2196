package matrix

import (
	"fmt"
	"io"
	"strings"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// MarkdownFile is the Markdown matrix of a report.
const MarkdownFile = "matrix.md"

// WriteMarkdown writes the matrix as Markdown: the runs, the cells that
// need attention (failures first), the changes from a baseline when d is
// not nil, then one table per id group.
func WriteMarkdown(w io.Writer, rep Report, d *Diff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# skewproof matrix\n\n%d runs, %d apiserver/kubelet@runtime columns, %d cells: %s\n\n", len(rep.Runs), len(rep.Pairs), len(rep.Cells), countsText(rep.Counts))
	b.WriteString("| run | source | apiserver | specs | verdicts |\n|---|---|---|---|---|\n")
	for _, r := range Summarize(rep).Runs {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %d | %s |\n", mdCell(r.Name), r.Source, r.APIServer, r.Specs, countsText(r.Counts))
	}
	if att := rep.Attention(); len(att) > 0 {
		fmt.Fprintf(&b, "\n## Needs attention (%d)\n\n| id | apiserver/kubelet | verdict | reason |\n|---|---|---|---|\n", len(att))
		for _, c := range att {
			fmt.Fprintf(&b, "| `%s` | %s | **%s** | %s |\n", c.ID, c.Pair, c.Verdict, mdCell(shortText(c.Worst().Why())))
		}
	}
	if d != nil {
		b.WriteString("\n")
		if err := writeDiffMarkdown(&b, *d, "##"); err != nil {
			return err
		}
	}
	header := "| id |"
	rule := "|---|"
	for _, p := range rep.Pairs {
		header += " " + p.String() + " |"
		rule += "---|"
	}
	fam := ""
	for _, g := range rep.Groups() {
		if g.Family.Name != fam {
			fam = g.Family.Name
			fmt.Fprintf(&b, "\n## %s\n", g.Family.Label)
		}
		fmt.Fprintf(&b, "\n### %s", g.Name)
		if g.Section != "" {
			fmt.Fprintf(&b, " — %s", g.Section)
		}
		fmt.Fprintf(&b, "\n\n%s\n%s\n", header, rule)
		for _, r := range g.Rows {
			fmt.Fprintf(&b, "| `%s` |", r.ID)
			for _, c := range r.Cells {
				fmt.Fprintf(&b, " %s |", mdVerdict(c))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nColumns are kube-apiserver/kubelet versions (`-`: no kubelet result in that run), then `@` the node's CRI+OCI runtime where the results name it. " +
		"A result observed at the API server counts for every kubelet of its run. A cell holding several results shows the worst " +
		"(fail > flaky > deviation > pass > skip); summary.json and matrix.html list them all.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func mdVerdict(c *Cell) string {
	if c == nil {
		return ""
	}
	s := c.Label()
	if c.Verdict == skew.Fail || c.Verdict == skew.Flaky {
		s = "**" + s + "**"
	}
	if n := len(c.Entries); n > 1 {
		s += fmt.Sprintf(" ×%d", n)
	}
	return s
}

// countsText is "1 fail, 2 pass": the non-zero counts, worst first.
func countsText(c reports.Counts) string {
	var parts []string
	for _, v := range Verdicts {
		if c[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[v], v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
