package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/skewproof/skewproof/skew"
)

func sample() []Result {
	return []Result{
		{Name: "[seccomp/api/types] x [LinuxOnly]", ID: "seccomp/api/types", Verdict: skew.Pass, APIServer: "1.37.2", Duration: time.Second},
		{Name: "[seccomp/kubelet/enforce] y [node:w1]", ID: "seccomp/kubelet/enforce", Node: "w1", Kubelet: "1.34.4", Verdict: skew.Deviation, Outcome: "upstream phase"},
		{Name: "[seccomp/failure/row-4] z [node:w1]", ID: "seccomp/failure/row-4", Node: "w1", Verdict: skew.Fail, Failure: "boom\ndetails"},
		{Name: "[seccomp/failure/row-1] z [node:w1]", ID: "seccomp/failure/row-1", Node: "w1", Verdict: skew.Skip, Reason: "no docker access"},
	}
}

func TestJUnitRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, Suite{Name: "seccomp", Cluster: "t", Results: sample()}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`<property name="verdict" value="deviation">`, `<property name="id" value="seccomp/kubelet/enforce">`,
		`<failure message="boom"`, `<skipped message="no docker access">`, `<testsuite name="seccomp" package="" tests="4" disabled="0" skipped="1" errors="0" failures="1"`,
		`<testsuites tests="4" disabled="1" errors="0" failures="1"`, `status="failed"`, `status="skipped"`, `status="passed"`} {
		if !strings.Contains(out, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, out)
		}
	}
	suites, err := ReadJUnit(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) != 1 || suites[0].Cluster != "t" || len(suites[0].Results) != 4 {
		t.Fatalf("read back %+v", suites)
	}
	got := suites[0].Results
	for i, want := range sample() {
		if got[i].ID != want.ID || got[i].Verdict != want.Verdict || got[i].Node != want.Node {
			t.Errorf("result %d: got %+v, want %+v", i, got[i], want)
		}
	}
	if c := Count(got); c[skew.Pass] != 1 || c[skew.Deviation] != 1 || c[skew.Fail] != 1 || c[skew.Skip] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestSummaryTable(t *testing.T) {
	var buf bytes.Buffer
	WriteSummary(&buf, sample())
	out := buf.String()
	if !strings.Contains(out, "cluster") || !strings.Contains(out, "w1") || !strings.Contains(out, "4 specs: 1 pass, 1 deviation, 1 fail, 1 skip") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestFromSpec(t *testing.T) {
	start := time.Now()
	entry := types.ReportEntry{Name: EntryName, Value: types.WrapEntryValue(`{"id":"seccomp/kubelet/localhost","node":"w1","verdict":"deviation"}`)}
	passed := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[seccomp/kubelet/localhost] t", StartTime: start,
		State: types.SpecStatePassed, ReportEntries: types.ReportEntries{entry}, RunTime: 2 * time.Second}
	r, ok := FromSpec(passed)
	if !ok || r.Verdict != skew.Deviation || r.Node != "w1" || r.Duration != 2*time.Second {
		t.Errorf("passed spec: %+v", r)
	}
	failed := passed
	failed.State = types.SpecStateFailed
	failed.Failure = types.Failure{Message: "Seccomp: want 2, got 0"}
	if r, _ := FromSpec(failed); r.Verdict != skew.Fail || !strings.Contains(r.Failure, "want 2") {
		t.Errorf("failed spec: %+v", r)
	}
	// An interrupt (Ginkgo's --timeout, SIGINT/SIGTERM) judged nothing: a
	// failure, which a JUnit reader sees, saying what stopped it.
	interrupted := passed
	interrupted.State = types.SpecStateInterrupted
	interrupted.Failure = types.Failure{Message: "Interrupted by Timeout"}
	if r, _ := FromSpec(interrupted); r.Verdict != skew.Fail || !strings.Contains(r.Reason, "interrupted") || !strings.Contains(r.Failure, "Interrupted by Timeout") {
		t.Errorf("interrupted spec: %+v, want a failure saying it was interrupted by the timeout", r)
	}
	if r := Unreported("[seccomp/kubelet/enforce] t [node:w1 kubelet:v1.37.2]", "w1", "its suite process ended with signal: killed"); r.Verdict != skew.Fail ||
		r.ID != "seccomp/kubelet/enforce" || r.Node != "w1" || !strings.Contains(r.Failure, "signal: killed") || Status(r, true) != "failed" {
		t.Errorf("unreported spec: %+v, want a failure naming how its process ended", r)
	}
	skipped := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[seccomp/failure/row-1] t", StartTime: start,
		State: types.SpecStateSkipped, Failure: types.Failure{Message: "host has no seccomp"}}
	if r, _ := FromSpec(skipped); r.Verdict != skew.Skip || r.Reason != "host has no seccomp" || r.ID != "seccomp/failure/row-1" {
		t.Errorf("skipped spec: %+v", r)
	}
	if _, ok := FromSpec(types.SpecReport{LeafNodeType: types.NodeTypeIt, State: types.SpecStateSkipped}); ok {
		t.Errorf("a spec that never started must not be reported")
	}
	if _, ok := FromSpec(types.SpecReport{LeafNodeType: types.NodeTypeIt, StartTime: start, State: types.SpecStateSkipped}); ok {
		t.Errorf("a spec that never started must not be reported")
	}
	if !strings.Contains(ProgressLine(Result{ID: "a/b/c", Verdict: skew.Skip, Reason: "why"}), "why") {
		t.Errorf("skip reason missing from the progress line")
	}
}

func TestWriteJUnitFileCreatesDir(t *testing.T) {
	path := t.TempDir() + "/a/b/junit.xml"
	if err := WriteJUnitFile(path, Suite{Name: "seccomp", Results: sample()}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadJUnitFiles(path)
	if err != nil || len(s) != 1 || len(s[0].Results) != 4 {
		t.Fatalf("read back %v %+v", err, s)
	}
}

// TestRuntimeNotResearched: a result judged against the KEP alone on a
// runtime nobody read keeps its verdict, carries the reason through JUnit,
// is listed for the run record and footnoted in the summary.
func TestRuntimeNotResearched(t *testing.T) {
	rs := sample()
	rs[1].CRIRuntime, rs[1].OCIRuntime = "containerd 1.7.24", "vendor-oci 0.1"
	rs[1].RuntimeNotResearched = "containerd 1.7 with vendor-oci not read"
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, Suite{Name: "seccomp", Cluster: "t", Results: rs}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<property name="runtime-not-researched" value="containerd 1.7 with vendor-oci not read">`) {
		t.Errorf("JUnit lacks the property:\n%s", buf.String())
	}
	suites, err := ReadJUnit(&buf)
	if err != nil {
		t.Fatal(err)
	}
	u := RuntimeUnread(suites[0].Results)
	want := RuntimeUnreadRecord{ID: "seccomp/kubelet/enforce", Node: "w1", Runtime: "containerd 1.7.24 vendor-oci 0.1",
		Verdict: skew.Deviation, Reason: "containerd 1.7 with vendor-oci not read"}
	if len(u) != 1 || u[0] != want {
		t.Errorf("RuntimeUnread = %+v, want [%+v]", u, want)
	}
	if !Green(rs[:2], false) {
		t.Error("a result judged against the KEP alone made the run not green")
	}
	var sum bytes.Buffer
	WriteSummary(&sum, rs)
	if !strings.Contains(sum.String(), "1 of them judged against the KEP alone") {
		t.Errorf("summary lacks the footnote:\n%s", sum.String())
	}
}
