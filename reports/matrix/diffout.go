package matrix

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/skewproof/skewproof/reports"
)

// DiffFormats are the formats WriteDiff writes.
var DiffFormats = []reports.Format{reports.Text, reports.JSON, reports.Markdown}

// WriteDiff writes d as text, json or markdown.
func WriteDiff(w io.Writer, format reports.Format, d Diff) error {
	switch format {
	case reports.JSON:
		return reports.WriteJSON(w, d)
	case reports.Markdown:
		return writeDiffMarkdown(w, d, "##")
	case reports.Text:
		return writeDiffText(w, d)
	}
	_, err := reports.ParseFormat(string(format), DiffFormats...)
	return err
}

// Headline is one line: the number of changes of each kind.
func (d Diff) Headline() string {
	parts := []string{}
	for _, k := range Kinds {
		parts = append(parts, fmt.Sprintf("%d %s", d.Count(k), k))
	}
	return fmt.Sprintf("%d cells changed, %d unchanged: %s", len(d.Changes), d.Same, strings.Join(parts, ", "))
}

func verdictOrDash(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

func writeDiffText(w io.Writer, d Diff) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "skewproof report diff: %s -> %s\n%s\n", d.Old, d.New, d.Headline())
	for _, k := range Kinds {
		cs := d.Of(k)
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(tw, "\n%s (%d):\n", k, len(cs))
		for _, c := range cs {
			fmt.Fprintf(tw, "  %s\t%s\t%s -> %s\t%s\n", c.ID, c.Pair, verdictOrDash(string(c.Old)), verdictOrDash(string(c.New)), shortText(c.Reason))
		}
	}
	fmt.Fprintf(tw, "\nids appeared (%d): %s\nids disappeared (%d): %s\n",
		len(d.IDsAppeared), strings.Join(d.IDsAppeared, ", "), len(d.IDsDisappeared), strings.Join(d.IDsDisappeared, ", "))
	return tw.Flush()
}

func writeDiffMarkdown(w io.Writer, d Diff, h string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Changes from `%s` to `%s`\n\n%s\n", h, d.Old, d.New, d.Headline())
	for _, k := range Kinds {
		cs := d.Of(k)
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s# %s (%d)\n\n| id | apiserver/kubelet | was | now | reason |\n|---|---|---|---|---|\n", h, k, len(cs))
		for _, c := range cs {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.ID, c.Pair, verdictOrDash(string(c.Old)), verdictOrDash(string(c.New)), mdCell(shortText(c.Reason)))
		}
	}
	fmt.Fprintf(&b, "\nIds appeared (%d): %s\n\nIds disappeared (%d): %s\n",
		len(d.IDsAppeared), mdIDs(d.IDsAppeared), len(d.IDsDisappeared), mdIDs(d.IDsDisappeared))
	_, err := io.WriteString(w, b.String())
	return err
}

func mdIDs(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return "`" + strings.Join(ids, "`, `") + "`"
}

// mdCell makes s safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
