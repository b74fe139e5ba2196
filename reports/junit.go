// Package reports writes and reads skewproof's JUnit files, merges runs and
// classifies results into verdicts. It runs nothing.
//
// Every test case carries its verdict and what it was compared with as
// JUnit test case properties:
//
//	<testcase name="[seccomp/kubelet/enforce] ... [node:t-worker]" classname="seccomp" time="3.2">
//	  <properties>
//	    <property name="id" value="seccomp/kubelet/enforce"/>
//	    <property name="verdict" value="pass"/>
//	    ...
package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/skewproof/skewproof/skew"
)

// Property names of a test case.
const (
	PropID         = "id"
	PropVerdict    = "verdict"
	PropReason     = "reason"
	PropNode       = "node"
	PropKubelet    = "kubelet-version"
	PropAPIServer  = "apiserver-version"
	PropObserved   = "observed"
	PropExpected   = "expected"
	PropKEPPlanned = "kep-planned"
	PropOutcome    = "outcome"
	// PropCRIRuntime and PropOCIRuntime name the node's container runtimes:
	// "containerd 1.7.24", "crun 1.21" ("" when unknown).
	PropCRIRuntime = "cri-runtime"
	PropOCIRuntime = "oci-runtime"
	// PropNotResearched marks a skip for want of skewproof's reading of the
	// release's sources (not a fact of the cluster): not green.
	PropNotResearched = "not-researched"
	// PropRuntimeNotResearched marks a result judged against the KEP alone
	// because skewproof has not read the node's container runtime for the
	// rule (skew.Expectation.RuntimeNotResearched): judged, and says why.
	PropRuntimeNotResearched = "runtime-not-researched"
	// PropStaged marks a result that observes what skewproof staged
	// itself, not the runtime under test (Result.Staged).
	PropStaged = "skewproof.staged"
)

// Result is one spec's result.
type Result struct {
	// Name is the full spec text.
	Name      string `json:"name"`
	ID        string `json:"id"`
	Node      string `json:"node,omitempty"`
	Kubelet   string `json:"kubelet,omitempty"`
	APIServer string `json:"apiserver,omitempty"`
	// CRIRuntime and OCIRuntime are the node's container runtimes, name
	// and version: "containerd 1.7.24", "crun 1.21" (empty when unknown).
	CRIRuntime string        `json:"criRuntime,omitempty"`
	OCIRuntime string        `json:"ociRuntime,omitempty"`
	Verdict    skew.Verdict  `json:"verdict"`
	Reason     string        `json:"reason,omitempty"`
	Observed   string        `json:"observed,omitempty"`
	Expected   string        `json:"expected,omitempty"`
	KEP        string        `json:"kepPlanned,omitempty"`
	Outcome    string        `json:"outcome,omitempty"`
	Failure    string        `json:"failure,omitempty"`
	Duration   time.Duration `json:"duration"`
	// NotResearched is set on a skip because the rule's sources were not
	// read at these versions: no verdict, and the run is not green.
	NotResearched string `json:"notResearched,omitempty"`
	// RuntimeNotResearched is set when the rule was judged against the KEP
	// alone because its outcome depends on the container runtime and
	// skewproof has not read the node's (skew.Expectation
	// .RuntimeNotResearched). The result is judged; the run record lists it.
	RuntimeNotResearched string `json:"runtimeNotResearched,omitempty"`
	// SkipKind says what a skip is a fact of (SkipRelease, SkipHost,
	// SkipCluster): a certification run (--certify) accepts only skips
	// for a fact of the release.
	SkipKind string `json:"skipKind,omitempty"`
	// Staged says what of the observation skewproof staged itself, when
	// the result observes that staging rather than the runtime's own
	// behaviour: failure row 1's restricted runtime handlers, which delete
	// the profile from the OCI spec before the runtime under test sees it.
	// Such a pass is judged (the kubelet and the wrapped runtime did what
	// the row allows once the field is gone) and green, but never a plain
	// pass: every report labels it "pass (staged)" and counts it apart.
	Staged string `json:"staged,omitempty"`
}

// StagedNote is the headline of a staged result (Result.Staged): what it
// observed, and what it did not.
func StagedNote(r Result) string {
	if r.Staged == "" {
		return ""
	}
	return "staged: observes " + r.Staged + ", not the runtime's own behaviour"
}

// VerdictLabel is the verdict as reports show it: "pass (staged)" (or
// "deviation (staged)") for a result that observes skewproof's own
// staging, else the verdict.
func VerdictLabel(r Result) string {
	if r.Staged != "" && (r.Verdict == skew.Pass || r.Verdict == skew.Deviation) {
		return string(r.Verdict) + " (staged)"
	}
	return string(r.Verdict)
}

// What a skip is a fact of (Result.SkipKind).
const (
	// SkipRelease: the rule does not exist at these versions (the oracle's
	// NotApplicable), or the release gives no way to observe it.
	SkipRelease = "release"
	// SkipHost: the node's kernel lacks what the rule needs (AppArmor).
	SkipHost = "host"
	// SkipCluster: the cluster under test lacks what the spec needs (node
	// access, a runtime handler, a feature gate's setting): a fact of the
	// cluster, not of the release. Also a skip that names no kind.
	SkipCluster = "cluster"
)

// PropSkipKind is the test case property of Result.SkipKind.
const PropSkipKind = "skip-kind"

// PropCertification is the suite property of a certification run.
const PropCertification = "certification"

// Suite is the results of one run against one cluster.
type Suite struct {
	Name      string
	Cluster   string
	Timestamp time.Time
	Results   []Result
	// FlakyTolerated: the run was told to tolerate flaky specs
	// (--allow-flaky); their test cases are written without a <failure>
	// and the suite carries the property flaky-tolerated=true. Otherwise
	// a flaky spec is a failure for every JUnit reader.
	FlakyTolerated bool
	// Selection narrows the specs run (Ginkgo syntax: the label filter,
	// focus and skip the run was given); written as the suite's
	// properties label-filter, focus and skip, so that a reader of the
	// JUnit file alone sees that only part of the suite was asked for.
	Selection Selection
	// Certification: the suite comes from a certification run (--certify),
	// written as the suite property certification=true.
	Certification bool
}

// Selection is what narrowed a run's specs beyond its suites.
type Selection struct {
	LabelFilter, Focus, Skip string
}

// String is the selection as a phrase ("" when nothing narrows).
func (s Selection) String() string {
	var parts []string
	for _, p := range []struct{ name, v string }{{"label filter", s.LabelFilter}, {"focus", s.Focus}, {"skip", s.Skip}} {
		if p.v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", p.name, p.v))
		}
	}
	return strings.Join(parts, ", ")
}

// Properties of a suite whose run was narrowed (Suite.Selection).
const (
	PropLabelFilter = "label-filter"
	PropFocus       = "focus"
	PropSkip        = "skip"
)

// RunFailure is a suite "skewproof" of one failed test case that stands for
// something about a whole run (not a spec) that keeps it from being green,
// so that readers of the JUnit file alone see it: "[skewproof] what [id]".
func RunFailure(cluster, id, what, failure string) Suite {
	return Suite{Name: "skewproof", Cluster: cluster, Timestamp: time.Now(), Results: []Result{{
		ID: id, Name: "[skewproof] " + what + " [" + id + "]", Verdict: skew.Fail, Failure: failure}}}
}

// PropFlakyTolerated is the suite property of a run that tolerated flakes.
const PropFlakyTolerated = "flaky-tolerated"

// FlakyFailureType is the type attribute of the <failure> of a flaky case.
const FlakyFailureType = "Flaky"

// Green says whether results make a green run: every one judged pass or
// deviation, or skipped for a fact of the cluster. A failure is never
// green; a flaky result (failed, then passed on a retry) only when the run
// tolerates flakes; a skip for want of researched sources never.
func Green(rs []Result, tolerateFlaky bool) bool {
	c := Count(rs)
	return c[skew.Fail] == 0 && (tolerateFlaky || c[skew.Flaky] == 0) && len(NotResearched(rs)) == 0
}

// NotResearched are the results skipped because skewproof has not read the
// rule's sources at the versions of the cluster: nothing was judged there.
func NotResearched(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Verdict == skew.Skip && r.NotResearched != "" {
			out = append(out, r)
		}
	}
	return out
}

// propFields pairs each property name with the Result field it carries;
// writing and reading a test case both go through it.
func (r *Result) propFields() []struct {
	name string
	v    *string
} {
	return []struct {
		name string
		v    *string
	}{
		{PropID, &r.ID}, {PropReason, &r.Reason}, {PropNode, &r.Node}, {PropKubelet, &r.Kubelet},
		{PropAPIServer, &r.APIServer}, {PropObserved, &r.Observed}, {PropExpected, &r.Expected},
		{PropKEPPlanned, &r.KEP}, {PropOutcome, &r.Outcome}, {PropNotResearched, &r.NotResearched},
		{PropCRIRuntime, &r.CRIRuntime}, {PropOCIRuntime, &r.OCIRuntime},
		{PropRuntimeNotResearched, &r.RuntimeNotResearched}, {PropSkipKind, &r.SkipKind}, {PropStaged, &r.Staged},
	}
}

func (r Result) props() *reporters.JUnitProperties {
	p := &reporters.JUnitProperties{}
	add := func(n, v string) {
		if v != "" {
			p.Properties = append(p.Properties, reporters.JUnitProperty{Name: n, Value: v})
		}
	}
	fields := r.propFields()
	add(fields[0].name, *fields[0].v) // id first, then the verdict
	add(PropVerdict, string(r.Verdict))
	for _, f := range fields[1:] {
		add(f.name, *f.v)
	}
	return p
}

// Status is the Ginkgo spec state (a JUnit test case's status attribute) a
// result is reported with: a flaky result is "failed" unless the run
// tolerated flakes (tolerated).
func Status(r Result, tolerated bool) string {
	switch {
	case r.Verdict == skew.Fail, r.Verdict == skew.Flaky && !tolerated:
		return "failed"
	case r.Verdict == skew.Skip:
		return "skipped"
	}
	return "passed"
}

// WriteJUnit writes suites as one JUnit document, in Ginkgo's JUnit types
// (reporters), the same as Ginkgo's own and the merged report's.
func WriteJUnit(w io.Writer, suites ...Suite) error {
	return EncodeJUnit(w, JUnitDoc(suites...))
}

// JUnitDoc is suites as one JUnit document, in Ginkgo's JUnit types.
func JUnitDoc(suites ...Suite) reporters.JUnitTestSuites {
	doc := reporters.JUnitTestSuites{}
	for _, s := range suites {
		js := reporters.JUnitTestSuite{Name: s.Name}
		if !s.Timestamp.IsZero() {
			js.Timestamp = s.Timestamp.UTC().Format(time.RFC3339)
		}
		if s.Cluster != "" {
			js.Properties.Properties = append(js.Properties.Properties, reporters.JUnitProperty{Name: "cluster", Value: s.Cluster})
		}
		if s.FlakyTolerated {
			js.Properties.Properties = append(js.Properties.Properties, reporters.JUnitProperty{Name: PropFlakyTolerated, Value: "true"})
		}
		if s.Certification {
			js.Properties.Properties = append(js.Properties.Properties, reporters.JUnitProperty{Name: PropCertification, Value: "true"})
		}
		for _, p := range []reporters.JUnitProperty{{Name: PropLabelFilter, Value: s.Selection.LabelFilter},
			{Name: PropFocus, Value: s.Selection.Focus}, {Name: PropSkip, Value: s.Selection.Skip}} {
			if p.Value != "" {
				js.Properties.Properties = append(js.Properties.Properties, p)
			}
		}
		for _, r := range s.Results {
			tc := reporters.JUnitTestCase{Name: r.Name, Classname: s.Name, Status: Status(r, s.FlakyTolerated), Time: r.Duration.Seconds(), Properties: r.props(),
				SystemOut: StagedNote(r)}
			switch r.Verdict {
			case skew.Fail:
				tc.Failure = &reporters.JUnitFailure{Message: FirstLine(r.Failure), Type: "Failure", Description: r.Failure}
				js.Failures++
			case skew.Skip:
				tc.Skipped = &reporters.JUnitSkipped{Message: r.Reason}
				js.Skipped++
			case skew.Flaky:
				if s.FlakyTolerated {
					// The earlier attempt's failure, for the reader.
					tc.SystemErr = r.Failure
					break
				}
				// Not conformant: it failed once. JUnit readers that know
				// only passed/failed/skipped must see a failure.
				tc.Failure = &reporters.JUnitFailure{Message: FlakyMessage(r), Type: FlakyFailureType, Description: r.Failure}
				js.Failures++
			}
			js.Tests++
			js.Time += r.Duration.Seconds()
			js.TestCases = append(js.TestCases, tc)
		}
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Disabled += js.Skipped
		doc.Time += js.Time
		doc.TestSuites = append(doc.TestSuites, js)
	}
	return doc
}

// EncodeJUnit writes doc as a JUnit file: the XML header, the document
// indented, a final newline. Every JUnit file skewproof writes goes
// through it.
func EncodeJUnit(w io.Writer, doc reporters.JUnitTestSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// FlakyMessage is the headline of a flaky result's <failure>: that it was
// flaky, and the first failure.
func FlakyMessage(r Result) string {
	first := FirstLine(strings.TrimPrefix(strings.TrimSpace(r.Failure), "Failure recorded during attempt 1:"))
	return strings.TrimSpace("flaky: failed, then passed on a retry; first failure: " + first)
}

// WriteJUnitFile writes suites to a file.
func WriteJUnitFile(path string, suites ...Suite) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteJUnit(f, suites...); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// ReadJUnit reads a document written by WriteJUnit (or any JUnit file whose
// test cases carry skewproof properties; test cases without them are read
// with the verdict their failure/error/skipped element implies).
func ReadJUnit(r io.Reader) ([]Suite, error) {
	doc, err := DecodeJUnit(r)
	if err != nil {
		return nil, err
	}
	var out []Suite
	for _, js := range doc.TestSuites {
		s := Suite{Name: js.Name, Cluster: js.Properties.WithName("cluster"), FlakyTolerated: js.Properties.WithName(PropFlakyTolerated) == "true",
			Certification: js.Properties.WithName(PropCertification) == "true",
			Selection:     Selection{LabelFilter: js.Properties.WithName(PropLabelFilter), Focus: js.Properties.WithName(PropFocus), Skip: js.Properties.WithName(PropSkip)}}
		if t, err := time.Parse(time.RFC3339, js.Timestamp); err == nil {
			s.Timestamp = t
		}
		for _, tc := range js.TestCases {
			s.Results = append(s.Results, ResultOf(tc))
		}
		out = append(out, s)
	}
	return out, nil
}

// DecodeJUnit decodes a JUnit document (root <testsuites>, as skewproof
// and Ginkgo write it) into Ginkgo's JUnit types, keeping every property.
func DecodeJUnit(r io.Reader) (reporters.JUnitTestSuites, error) {
	var doc reporters.JUnitTestSuites
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return reporters.JUnitTestSuites{}, fmt.Errorf("reading JUnit: %w", err)
	}
	return doc, nil
}

// ResultOf reads one JUnit test case: its skewproof properties, else the
// verdict its failure, error or skipped element implies. A failure element
// makes it a failure unless its verdict is flaky (failed, then passed on a
// retry: the failure of the first attempt is kept).
func ResultOf(tc reporters.JUnitTestCase) Result {
	r := Result{Name: tc.Name, Duration: time.Duration(tc.Time * float64(time.Second))}
	if tc.Properties != nil {
		fields := r.propFields()
		for _, p := range tc.Properties.Properties {
			if p.Name == PropVerdict {
				r.Verdict = skew.Verdict(p.Value)
			}
			for _, f := range fields {
				if f.name == p.Name {
					*f.v = p.Value
				}
			}
		}
	}
	failure := ""
	switch {
	case tc.Failure != nil:
		failure = tc.Failure.Description
	case tc.Error != nil:
		failure = strings.TrimSpace(tc.Error.Message + "\n" + tc.Error.Description)
	}
	switch {
	case (tc.Failure != nil || tc.Error != nil) && r.Verdict == skew.Flaky:
		r.Failure = failure
	case r.Verdict == skew.Flaky:
		r.Failure = strings.TrimSpace(tc.SystemErr)
	case tc.Failure != nil || tc.Error != nil:
		r.Verdict, r.Failure = skew.Fail, failure
	case tc.Skipped != nil && r.Verdict == "":
		r.Verdict, r.Reason = skew.Skip, tc.Skipped.Message
	case r.Verdict == "":
		r.Verdict = skew.Pass
	}
	if r.ID == "" {
		r.ID = idFromText(r.Name)
	}
	return r
}

// ReadJUnitFiles reads and concatenates several files (report merge).
func ReadJUnitFiles(paths ...string) ([]Suite, error) {
	var out []Suite
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		s, err := ReadJUnit(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, s...)
	}
	return out, nil
}

// Counts tallies verdicts.
type Counts map[skew.Verdict]int

// StagedPass and StagedDeviation are not verdicts: Counts holds under them
// how many of the pass and deviation results observed skewproof's own
// staging (Result.Staged, VerdictLabel); those are counted under their
// verdict too.
const (
	StagedPass      = skew.Verdict("pass (staged)")
	StagedDeviation = skew.Verdict("deviation (staged)")
)

func (c Counts) String() string {
	staged := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf(" (%d staged)", n)
	}
	s := fmt.Sprintf("%d pass%s, %d deviation%s, %d fail, %d skip", c[skew.Pass], staged(c[StagedPass]),
		c[skew.Deviation], staged(c[StagedDeviation]), c[skew.Fail], c[skew.Skip])
	if c[skew.Flaky] > 0 {
		s += fmt.Sprintf(", %d flaky", c[skew.Flaky])
	}
	return s
}

// Count tallies the verdicts of results.
func Count(rs []Result) Counts {
	c := Counts{}
	for _, r := range rs {
		c[r.Verdict]++
		if l := skew.Verdict(VerdictLabel(r)); l != r.Verdict {
			c[l]++
		}
	}
	return c
}

// WriteSummary prints a table: one row per id, one column per node (or
// "cluster" for API server rules), each cell a verdict.
func WriteSummary(w io.Writer, rs []Result) {
	cols := []string{}
	seenCol := map[string]bool{}
	ids := []string{}
	seenID := map[string]bool{}
	cell := map[string]map[string]string{}
	for _, r := range rs {
		col := r.Node
		if col == "" {
			col = "cluster"
		}
		if !seenCol[col] {
			seenCol[col] = true
			cols = append(cols, col)
		}
		if !seenID[r.ID] {
			seenID[r.ID] = true
			ids = append(ids, r.ID)
			cell[r.ID] = map[string]string{}
		}
		v := VerdictLabel(r)
		if old := cell[r.ID][col]; old != "" && old != v {
			v = old + "+" + v
		}
		cell[r.ID][col] = v
	}
	sort.Strings(ids)
	sort.Slice(cols, func(i, j int) bool {
		if (cols[i] == "cluster") != (cols[j] == "cluster") {
			return cols[i] == "cluster"
		}
		return cols[i] < cols[j]
	})
	idw := len("id")
	for _, id := range ids {
		if len(id) > idw {
			idw = len(id)
		}
	}
	fmt.Fprintf(w, "%-*s", idw, "id")
	for _, c := range cols {
		fmt.Fprintf(w, "  %-*s", max(len(c), 9), c)
	}
	fmt.Fprintln(w)
	for _, id := range ids {
		fmt.Fprintf(w, "%-*s", idw, id)
		for _, c := range cols {
			v := cell[id][c]
			if v == "" {
				v = "-"
			}
			fmt.Fprintf(w, "  %-*s", max(len(c), 9), v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%d specs: %s\n", len(rs), Count(rs))
	if u := RuntimeUnread(rs); len(u) > 0 {
		fmt.Fprintf(w, "%d of them judged against the KEP alone: skewproof has not read the node's container runtime for the rule (run.json, runtimeNotResearched)\n", len(u))
	}
	if c := Count(rs); c[StagedPass]+c[StagedDeviation] > 0 {
		n := c[StagedPass] + c[StagedDeviation]
		fmt.Fprintf(w, "%d of them staged: they observe skewproof's own restricted runtime handlers, not the runtime's own behaviour (JUnit property %s; docs/suites/README.md)\n", n, PropStaged)
	}
}

// RuntimeUnread lists the results judged against the KEP alone for want of
// skewproof's reading of the node's container runtime, one entry per result.
func RuntimeUnread(rs []Result) []RuntimeUnreadRecord {
	var out []RuntimeUnreadRecord
	for _, r := range rs {
		if r.RuntimeNotResearched != "" {
			out = append(out, RuntimeUnreadRecord{ID: r.ID, Node: r.Node, Runtime: strings.TrimSpace(r.CRIRuntime + " " + r.OCIRuntime),
				Verdict: r.Verdict, Reason: r.RuntimeNotResearched})
		}
	}
	return out
}

// FirstLine is the first line of s, trimmed (a failure's headline).
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
