package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// A result that observes skewproof's own staging (failure row 1's
// restricted handlers) is never a plain pass: the JUnit test case carries
// the property skewproof.staged and says so in its system-out, the
// progress line and the summary label it "pass (staged)" and count it
// apart; it stays green.
func TestStagedResult(t *testing.T) {
	staged := Result{Name: "[seccomp/failure/row-1] x [node:w1]", ID: "seccomp/failure/row-1", Node: "w1", Verdict: skew.Pass,
		Reason: "staged: observes …; matches the KEP: r", Staged: "skewproof's restricted runtime handler skewproof-noseccomp"}
	plain := Result{Name: "[seccomp/kubelet/enforce] y [node:w1]", ID: "seccomp/kubelet/enforce", Node: "w1", Verdict: skew.Pass}
	rs := []Result{staged, plain}

	var buf bytes.Buffer
	if err := WriteJUnit(&buf, Suite{Name: "seccomp", Results: rs}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`<property name="skewproof.staged" value="skewproof&#39;s restricted runtime handler skewproof-noseccomp">`,
		`<system-out>staged: observes skewproof&#39;s restricted runtime handler skewproof-noseccomp, not the runtime&#39;s own behaviour</system-out>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("JUnit lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "<system-out>"); n != 1 {
		t.Errorf("%d system-out elements, want 1 (the staged case's)", n)
	}
	suites, err := ReadJUnit(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if got := suites[0].Results[0]; got.Staged != staged.Staged || got.Verdict != skew.Pass {
		t.Errorf("read back %+v", got)
	}

	if l := ProgressLine(staged); !strings.HasPrefix(l, "pass (staged) ") {
		t.Errorf("progress line %q, want it to start with pass (staged)", l)
	}
	if l := ProgressLine(plain); !strings.HasPrefix(l, "pass ") || strings.Contains(l, "staged") {
		t.Errorf("plain pass's progress line %q", l)
	}
	if c := Count(rs); c[skew.Pass] != 2 || c[StagedPass] != 1 || !strings.HasPrefix(c.String(), "2 pass (1 staged), 0 deviation") {
		t.Errorf("counts %v: %s", c, c)
	}
	dev := staged
	dev.Verdict = skew.Deviation
	if c := Count([]Result{dev}); c[StagedDeviation] != 1 || c[StagedPass] != 0 || !strings.Contains(c.String(), "1 deviation (1 staged)") {
		t.Errorf("a staged deviation: %s", c)
	}
	failed := staged
	failed.Verdict = skew.Fail
	if VerdictLabel(failed) != "fail" || Count([]Result{failed})[StagedPass] != 0 {
		t.Errorf("a staged failure is a failure: %q", VerdictLabel(failed))
	}

	var sum bytes.Buffer
	WriteSummary(&sum, rs)
	for _, want := range []string{"pass (staged)", "2 specs: 2 pass (1 staged)", "1 of them staged: they observe skewproof's own restricted runtime handlers"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	// Decided: green (judged, of skewproof's staging), labelled apart.
	if !Green(rs, false) {
		t.Error("a staged pass is judged: the run is green")
	}
}
