package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// A flaky case keeps its verdict (and the first attempt's failure) even
// with a failure element; a plain failure element still means fail.
func TestReadFlakyAndErrors(t *testing.T) {
	doc := `<testsuites><testsuite name="seccomp">
  <testcase name="[seccomp/kubelet/enforce] a" classname="seccomp" time="1">
    <properties><property name="id" value="seccomp/kubelet/enforce"/><property name="verdict" value="flaky"/></properties>
    <failure message="first attempt" type="Failure">attempt 1: Seccomp: want 2, got 0</failure>
  </testcase>
  <testcase name="[seccomp/kubelet/localhost] b" classname="seccomp" time="1">
    <properties><property name="verdict" value="pass"/></properties>
    <failure message="boom" type="Failure">boom</failure>
  </testcase>
  <testcase name="[seccomp/api/types] c" classname="seccomp" time="1"><error message="panicked" type="panicked">stack</error></testcase>
</testsuite></testsuites>`
	suites, err := ReadJUnit(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	rs := suites[0].Results
	if rs[0].Verdict != skew.Flaky || !strings.Contains(rs[0].Failure, "want 2") {
		t.Errorf("flaky case read as %+v", rs[0])
	}
	if rs[1].Verdict != skew.Fail || rs[1].ID != "seccomp/kubelet/localhost" {
		t.Errorf("failure element must make a fail (id from the name): %+v", rs[1])
	}
	if rs[2].Verdict != skew.Fail || !strings.Contains(rs[2].Failure, "stack") {
		t.Errorf("error element must make a fail: %+v", rs[2])
	}
	if got := Count(rs).String(); got != "0 pass, 0 deviation, 2 fail, 0 skip, 1 flaky" {
		t.Errorf("counts: %s", got)
	}
	if got := Count(rs[1:]).String(); strings.Contains(got, "flaky") {
		t.Errorf("flaky named without flaky results: %s", got)
	}
}

// WriteJUnit keeps a flaky verdict through a round trip; the root must be
// <testsuites>; malformed XML is an error.
func TestReadFlakyRoundTripAndRoot(t *testing.T) {
	var buf bytes.Buffer
	in := Suite{Name: "apparmor", Cluster: "c", Results: []Result{{Name: "[apparmor/kubelet/enforce] x", ID: "apparmor/kubelet/enforce", Verdict: skew.Flaky}}}
	if err := WriteJUnit(&buf, in); err != nil {
		t.Fatal(err)
	}
	suites, err := ReadJUnit(&buf)
	if err != nil || suites[0].Results[0].Verdict != skew.Flaky || suites[0].Cluster != "c" {
		t.Fatalf("round trip: %v %+v", err, suites)
	}
	// The root must be <testsuites> (bundle verification relies on it).
	if _, err := ReadJUnit(strings.NewReader(`<testsuite name="x"></testsuite>`)); err == nil {
		t.Errorf("a lone <testsuite> root read without error")
	}
	if _, err := ReadJUnit(strings.NewReader("<testsuites><testsuite")); err == nil {
		t.Errorf("malformed JUnit read without error")
	}
}

// A narrowed run says so in its JUnit suites' properties, for readers of
// the JUnit file alone.
func TestSelectionIsWrittenToJUnit(t *testing.T) {
	var b strings.Builder
	s := Suite{Name: "seccomp", Cluster: "c", Selection: Selection{LabelFilter: "smoke", Skip: "row-4"},
		Results: []Result{{Name: "[seccomp/api/types] x", ID: "seccomp/api/types", Verdict: skew.Pass}}}
	if err := WriteJUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeJUnit(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	p := doc.TestSuites[0].Properties
	if p.WithName(PropLabelFilter) != "smoke" || p.WithName(PropSkip) != "row-4" || p.WithName(PropFocus) != "" {
		t.Errorf("suite properties %+v, want label-filter smoke and skip row-4", p)
	}
	if got := s.Selection.String(); got != `label filter "smoke", skip "row-4"` {
		t.Errorf("Selection.String() = %q", got)
	}
}
