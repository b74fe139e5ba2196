package matrix

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/skewproof/skewproof/skew"
)

// HTMLFile is the self-contained HTML matrix of a report.
const HTMLFile = "matrix.html"

// Colours are the cell background of each verdict in matrix.html.
var Colours = map[skew.Verdict]string{
	skew.Pass:      "#8fd19e",
	skew.Deviation: "#ffd166",
	skew.Fail:      "#ef476f",
	skew.Skip:      "#d0d4d9",
	skew.Flaky:     "#b39ddb",
}

//go:embed matrix.html.tmpl
var htmlText string

var htmlTmpl = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"short": shortText,
	"css":   func(s string) template.CSS { return template.CSS(s) },
}).Parse(htmlText))

type htmlCell struct {
	*Cell
	DOMID string
	Title string
	Label string
}

type htmlRow struct {
	Row
	Cells []*htmlCell
}

type htmlGroup struct {
	Group
	Rows []htmlRow
}

type htmlVerdict struct {
	Name   string
	Colour string
	Count  int
}

type htmlPage struct {
	Report   Report
	Summary  Summary
	Verdicts []htmlVerdict
	Families []Family
	Groups   []htmlGroup
	Cells    []*htmlCell // every cell, for its detail template
	Failing  []*htmlCell
	Diff     *Diff
	Kinds    []string
	Columns  int
}

// WriteHTML writes matrix.html: one page, inline CSS and JavaScript only.
// Clicking a cell shows its results (observed, expected, KEP plan), the
// KEP section and the upstream source the oracle cites; the page filters by
// verdict and by KEP; failing cells are listed first; with d, the changes
// from a baseline.
func WriteHTML(w io.Writer, rep Report, d *Diff) error {
	p := htmlPage{Report: rep, Summary: Summarize(rep), Diff: d, Kinds: Kinds, Columns: len(rep.Pairs) + 1}
	for _, v := range Verdicts {
		p.Verdicts = append(p.Verdicts, htmlVerdict{string(v), Colours[v], rep.Counts[v]})
	}
	byKey := map[cellKey]*htmlCell{}
	for i := range rep.Cells {
		c := &rep.Cells[i]
		hc := &htmlCell{Cell: c, DOMID: fmt.Sprintf("c%d", i), Label: c.Label()}
		if n := len(c.Entries); n > 1 {
			hc.Label += fmt.Sprintf(" ×%d", n)
		}
		hc.Title = fmt.Sprintf("%s @ %s: %s", c.ID, c.Pair, c.Label())
		byKey[cellKey{c.ID, c.Pair}] = hc
		p.Cells = append(p.Cells, hc)
	}
	for _, c := range rep.Attention() {
		p.Failing = append(p.Failing, byKey[cellKey{c.ID, c.Pair}])
	}
	seen := map[string]bool{}
	for _, g := range rep.Groups() {
		if !seen[g.Family.Name] {
			seen[g.Family.Name] = true
			p.Families = append(p.Families, g.Family)
		}
		hg := htmlGroup{Group: g}
		for _, r := range g.Rows {
			hr := htmlRow{Row: r}
			for _, c := range r.Cells {
				if c == nil {
					hr.Cells = append(hr.Cells, nil)
					continue
				}
				hr.Cells = append(hr.Cells, byKey[cellKey{c.ID, c.Pair}])
			}
			hg.Rows = append(hg.Rows, hr)
		}
		p.Groups = append(p.Groups, hg)
	}
	var b strings.Builder
	if err := htmlTmpl.Execute(&b, p); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
