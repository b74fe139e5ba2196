package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// WriteJSON writes v to w as JSON indented by two spaces, with a final
// newline: the json format of every command that has one.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Describe renders an observation as one line.
func Describe(o skew.Observation) string {
	if o.NotApplicable != "" {
		return "n/a: " + o.NotApplicable
	}
	parts := []string{o.Summary}
	if o.Admission != "" && !strings.Contains(strings.ToLower(o.Summary), string(o.Admission)) {
		parts = append(parts, string(o.Admission))
	}
	if len(o.MessageContains) > 0 {
		parts = append(parts, "message contains "+quoteAll(o.MessageContains, " / "))
	}
	if len(o.Annotations) > 0 {
		parts = append(parts, "annotations "+kv(o.Annotations))
	}
	if len(o.AbsentAnnotations) > 0 {
		parts = append(parts, "no annotation "+strings.Join(o.AbsentAnnotations, ", "))
	}
	if len(o.Fields) > 0 {
		parts = append(parts, "fields "+kv(o.Fields))
	}
	if len(o.AbsentFields) > 0 {
		parts = append(parts, "unset "+strings.Join(o.AbsentFields, ", "))
	}
	if len(o.Warnings) > 0 {
		parts = append(parts, "warnings "+quoteAll(o.Warnings, " + "))
	}
	if len(o.WarningContains) > 0 {
		parts = append(parts, "a warning naming "+quoteAll(o.WarningContains, " and "))
	}
	if o.NoWarnings {
		parts = append(parts, "no warning")
	}
	if o.ReadyMessageContains != "" {
		parts = append(parts, fmt.Sprintf("Ready message contains %q", o.ReadyMessageContains))
	}
	if o.ReadyMessageExcludes != "" {
		parts = append(parts, fmt.Sprintf("Ready message does not contain %q", o.ReadyMessageExcludes))
	}
	if o.Container != nil {
		parts = append(parts, "container "+describeContainer(*o.Container))
	}
	if len(o.AnyOf) > 0 {
		var alts []string
		for _, c := range o.AnyOf {
			alts = append(alts, describeContainer(c))
		}
		parts = append(parts, "one of: "+strings.Join(alts, " | "))
	}
	var order []string
	byCase := map[string][]string{}
	for _, c := range o.Cases {
		if _, ok := byCase[c.Case]; !ok {
			order = append(order, c.Case)
		}
		byCase[c.Case] = append(byCase[c.Case], describeContainer(c))
	}
	for _, name := range order {
		parts = append(parts, "case "+name+": "+strings.Join(byCase[name], " or "))
	}
	return strings.Join(parts, "; ")
}

func describeContainer(c skew.ContainerOutcome) string {
	s := string(c.State)
	if c.SeccompMode != nil {
		s += fmt.Sprintf(", Seccomp: %d", *c.SeccompMode)
	}
	switch c.AppArmorProfile {
	case "":
	case skew.RuntimeDefaultMarker:
		s += ", attr/current \"<the runtime's default profile> (enforce)\" (name not researched)"
	default:
		s += fmt.Sprintf(", attr/current %q", c.AppArmorProfile)
	}
	if c.Effect != "" {
		s += ", effect of " + c.Effect + " shown by behaviour"
	}
	if c.Reason != "" {
		s += ", reason " + c.Reason
	}
	if c.MessageContains != "" {
		s += fmt.Sprintf(", message contains %q", c.MessageContains)
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

func kv(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(s, ", ")
}

func quoteAll(ss []string, sep string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, sep)
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// simulateRecord is the JSON form of one simulated scenario.
type simulateRecord struct {
	ID         string           `json:"id"`
	Title      string           `json:"title"`
	KEPRef     string           `json:"kepRef"`
	Component  skew.Component   `json:"component"`
	Apiserver  string           `json:"apiserver"`
	Kubelet    string           `json:"kubelet"`
	Version    string           `json:"evaluatedAt"`
	Expected   skew.Observation `json:"expected"`
	KEPPlanned skew.Observation `json:"kepPlanned"`
	KEPPhase   string           `json:"kepPhase"`
	Phase      string           `json:"upstreamPhase"`
	Deviation  bool             `json:"deviation"`
	Reason     string           `json:"reason"`
	Source     string           `json:"source"`
	Skip       string           `json:"skip,omitempty"`
	// RuntimeNotResearched and RuntimeSource: see skew.Expectation.
	RuntimeNotResearched string `json:"runtimeNotResearched,omitempty"`
	RuntimeSource        string `json:"runtimeSource,omitempty"`
	// Observed: see skew.Expectation.
	Observed []skew.ObservedVerdict `json:"observed,omitempty"`
}

// observedText says on which clusters a real run gave the rule's verdict at
// these minors ("" when none did).
func observedText(e skew.Expectation) string {
	var out []string
	for _, o := range e.Observed {
		s := string(o.Verdict) + " on " + o.Cluster()
		if o.Runtime != "" {
			s += " (" + o.Runtime + ")"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// WriteSimulation renders expectations as text, json or markdown. command
// is the command line that reproduces the output (for markdown).
func WriteSimulation(w io.Writer, format Format, es []skew.Expectation, command string) error {
	switch format {
	case JSON:
		recs := make([]simulateRecord, len(es))
		for i, e := range es {
			recs[i] = simulateRecord{e.ID, e.Title, e.KEPRef, e.Component, e.Apiserver, e.Kubelet, e.Version,
				e.Expected, e.KEPPlanned, e.KEPPhase, e.Phase, e.Deviation, e.Reason, e.Source, e.Skip, e.RuntimeNotResearched, e.RuntimeSource, e.Observed}
		}
		return WriteJSON(w, recs)
	case Markdown:
		if len(es) == 0 {
			return nil
		}
		dev := 0
		for _, e := range es {
			if e.Deviation {
				dev++
			}
		}
		fmt.Fprintf(w, "# Expected outcomes: kube-apiserver v%s, kubelet v%s\n\n", es[0].Apiserver, es[0].Kubelet)
		if command != "" {
			fmt.Fprintf(w, "Reproduce with `%s`.\n\n", command)
		}
		fmt.Fprintf(w, "%d scenarios, %d where upstream deviates from the KEP plan. Apiserver rules are evaluated at the apiserver version, kubelet rules at the kubelet version. \"Expected\" is what the upstream release does (what the suites assert); \"KEP plan\" is what the KEPs plan for that version.", len(es), dev)
		observed := slices.ContainsFunc(es, func(e skew.Expectation) bool { return len(e.Observed) > 0 })
		if observed {
			fmt.Fprint(w, " \"Observed\" lists the real clusters of these minors that judged the rule (docs/oracle/observed.md); the others were read, not observed.")
		}
		fmt.Fprint(w, "\n\n")
		if observed {
			fmt.Fprintln(w, "| id | component | expected (upstream) | KEP plan | deviation | skip on this host | observed |")
			fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
		} else {
			fmt.Fprintln(w, "| id | component | expected (upstream) | KEP plan | deviation | skip on this host |")
			fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		}
		for _, e := range es {
			plan := "same"
			// Not researched upstream: nothing is the same, show the plan.
			if e.Deviation || (e.Expected.NotApplicable != "" && e.KEPPlanned.NotApplicable == "") {
				plan = e.KEPPhase + ": " + Describe(e.KEPPlanned)
			}
			d := "no"
			if e.Deviation {
				d = "**yes**"
			}
			exp := e.Phase + ": " + Describe(e.Expected)
			if skipSaysAll(e) {
				exp = e.Phase + " (see skip)"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s |", e.ID, e.Component, mdCell(exp), mdCell(plan), d, mdCell(e.Skip))
			if observed {
				fmt.Fprintf(w, " %s |", mdCell(observedText(e)))
			}
			fmt.Fprintln(w)
		}
		if dev > 0 {
			fmt.Fprint(w, "\n## Deviations\n\n")
			for _, e := range es {
				if e.Deviation {
					fmt.Fprintf(w, "- `%s` (%s): %s\n", e.ID, e.KEPRef, e.Reason)
				}
			}
		}
		writeRuntimeNotResearched(w, es, "\n## Runtime not researched\n\n", "- `%s`: %s\n")
		return nil
	case Text, "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCOMPONENT\tDEVIATION\tEXPECTED")
		observed := 0
		for _, e := range es {
			if len(e.Observed) > 0 {
				observed++
			}
			d := "-"
			if e.Deviation {
				d = "yes"
			}
			exp := Describe(e.Expected)
			if e.RuntimeNotResearched != "" {
				exp = "[runtime not researched] " + exp
			}
			switch {
			case skipSaysAll(e):
				exp = "[skip: " + e.Skip + "]"
			case e.Skip != "":
				exp = "[skip: " + e.Skip + "] " + exp
			}
			if o := observedText(e); o != "" {
				exp += " [observed: " + o + "]"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, e.Component, d, exp)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if observed > 0 {
			fmt.Fprintf(w, "observed on real clusters of these minors: %d of %d answers (docs/oracle/observed.md); the rest were read, not observed\n", observed, len(es))
		}
		for _, e := range es {
			if e.Deviation {
				fmt.Fprintf(w, "deviation %s: %s\n", e.ID, e.Reason)
			}
		}
		writeRuntimeNotResearched(w, es, "", "runtime not researched %s: %s\n")
		return nil
	}
	return errFormat(format, OracleFormats...)
}

// skipSaysAll reports whether the skip reason already says why the rule has
// no expected observation (e.g. "not researched at …"), so the expectation
// need not repeat it.
func skipSaysAll(e skew.Expectation) bool {
	return e.Expected.NotApplicable != "" && strings.Contains(e.Skip, e.Expected.NotApplicable)
}

// WriteUpgrade renders the changes of an upgrade.
func WriteUpgrade(w io.Writer, format Format, from, to string, cs []skew.Change, command, note string) error {
	switch format {
	case JSON:
		if cs == nil {
			cs = []skew.Change{}
		}
		return WriteJSON(w, struct {
			From    string        `json:"from"`
			To      string        `json:"to"`
			Note    string        `json:"note,omitempty"`
			Changes []skew.Change `json:"changes"`
		}{from, to, note, cs})
	case Markdown:
		fmt.Fprintf(w, "# What changes for workloads: upgrade from v%s to v%s\n\n", from, to)
		if command != "" {
			fmt.Fprintf(w, "Reproduce with `%s`.\n\n", command)
		}
		fmt.Fprintf(w, "Compares a cluster entirely at v%s (kube-apiserver and kubelets) with one entirely at v%s and lists only the scenarios whose expected outcome (upstream) or KEP plan changes. %s\n\n", from, to, note)
		fmt.Fprintln(w, "| id | component | what changes | before (upstream) | after (upstream) | KEP plan after | deviation after |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
		for _, c := range cs {
			what := "behaviour"
			if !c.Behaviour {
				what = "KEP plan only (upstream unchanged)"
			}
			d := "no"
			if c.After.Deviation {
				d = "**yes**"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s | %s: %s | %s: %s | %s: %s | %s |\n", c.ID, c.Component, what,
				mdCell(c.Before.Phase), mdCell(Describe(c.Before.Expected)),
				mdCell(c.After.Phase), mdCell(Describe(c.After.Expected)),
				mdCell(c.After.KEPPhase), mdCell(Describe(c.After.KEPPlanned)), d)
		}
		if len(cs) == 0 {
			fmt.Fprintln(w, "\nNothing changes for workloads.")
		}
		return nil
	case Text, "":
		fmt.Fprintf(w, "upgrade v%s -> v%s: %d scenarios change\n", from, to, len(cs))
		if note != "" {
			fmt.Fprintln(w, note)
		}
		for _, c := range cs {
			what := "behaviour changes"
			if !c.Behaviour {
				what = "KEP plan changes only"
			}
			fmt.Fprintf(w, "%s (%s, %s)\n", c.ID, c.Component, what)
			fmt.Fprintf(w, "  before: %s: %s\n  after:  %s: %s\n",
				c.Before.Phase, Describe(c.Before.Expected), c.After.Phase, Describe(c.After.Expected))
			if c.After.Deviation {
				fmt.Fprintf(w, "  KEP plan after: %s: %s\n", c.After.KEPPhase, Describe(c.After.KEPPlanned))
			}
		}
		return nil
	}
	return errFormat(format, OracleFormats...)
}

// WriteMatrix renders a cluster plan as text, json or a GitHub Actions
// strategy matrix.
func WriteMatrix(w io.Writer, format Format, cs []release.Cluster) error {
	switch format {
	case JSON:
		return WriteJSON(w, cs)
	case GitHub:
		type entry struct {
			Name      string `json:"name"`
			Apiserver string `json:"apiserver"`
			Kubelets  string `json:"kubelets"`
			// Suites, for a preset's leg: the suites its versions were read for.
			Suites string `json:"suites,omitempty"`
		}
		m := struct {
			Include []entry `json:"include"`
		}{Include: []entry{}}
		for _, c := range cs {
			m.Include = append(m.Include, entry{Name: "apiserver-" + c.Apiserver, Apiserver: c.Apiserver, Kubelets: strings.Join(c.Kubelets, ","), Suites: strings.Join(c.Suites, ",")})
		}
		return json.NewEncoder(w).Encode(m)
	case Text, "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		suites := slices.ContainsFunc(cs, func(c release.Cluster) bool { return len(c.Suites) > 0 })
		head := "APISERVER\tKUBELETS"
		if suites {
			head += "\tSUITES"
		}
		fmt.Fprintln(tw, head)
		for _, c := range cs {
			k := strings.Join(c.Kubelets, " ")
			if len(c.Missing) > 0 {
				k += "  (no served release of " + strings.Join(c.Missing, ", ") + ")"
			}
			if suites {
				k += "\t" + strings.Join(c.Suites, ",")
			}
			fmt.Fprintf(tw, "%s\t%s\n", c.Apiserver, k)
		}
		return tw.Flush()
	}
	return errFormat(format, MatrixFormats...)
}

// WriteDeviations renders the deviations between the KEP plans and upstream
// releases for a range of minors as a Markdown section.
func WriteDeviations(w io.Writer, format Format, from, to release.Minor, ds []skew.DeviationEntry, command string) error {
	switch format {
	case JSON:
		if ds == nil {
			ds = []skew.DeviationEntry{}
		}
		return WriteJSON(w, ds)
	case Markdown:
		fmt.Fprintf(w, "## Deviations found in v%s to v%s\n\n", from, to)
		if command != "" {
			fmt.Fprintf(w, "Generated with `%s`.\n\n", command)
		}
		fmt.Fprintln(w, "A minor outside the releases whose sources were read for a rule is not researched: no deviation is claimed there.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| id | KEP reference | minors | KEP plan | upstream | upstream source |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
		for _, d := range ds {
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s |\n", d.ID, mdCell(d.KEPRef), strings.Join(d.Minors, ", "), mdCell(d.KEP), mdCell(d.Upstream), mdCell(d.Source))
		}
		return nil
	case Text, "":
		for _, d := range ds {
			fmt.Fprintf(w, "%s at %s\n  KEP:      %s\n  upstream: %s\n  source:   %s\n", d.ID, strings.Join(d.Minors, ", "), d.KEP, d.Upstream, d.Source)
		}
		return nil
	}
	return errFormat(format, OracleFormats...)
}
