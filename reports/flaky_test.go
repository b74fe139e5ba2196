package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/skewproof/skewproof/skew"
)

// A spec that passed on Ginkgo's second attempt (--flake-attempts=2) is
// flaky, with the first attempt's failure kept; one that failed twice
// fails; one that passed at once passes.
func TestFromSpecFlaky(t *testing.T) {
	entry := types.ReportEntry{Name: EntryName, Value: types.WrapEntryValue(`{"id":"seccomp/kubelet/enforce","node":"w1","verdict":"pass"}`)}
	retried := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[seccomp/kubelet/enforce] t", StartTime: time.Now(),
		State: types.SpecStatePassed, ReportEntries: types.ReportEntries{entry}, NumAttempts: 2, MaxFlakeAttempts: 2,
		AdditionalFailures: []types.AdditionalFailure{{State: types.SpecStateFailed,
			Failure: types.Failure{Message: "Failure recorded during attempt 1:\ncontainer never started"}}}}
	r, ok := FromSpec(retried)
	if !ok || r.Verdict != skew.Flaky || !strings.Contains(r.Failure, "container never started") || !strings.Contains(r.Reason, "pass on attempt 2") {
		t.Errorf("passed on retry: %+v; want flaky with the first failure", r)
	}
	once := retried
	once.NumAttempts, once.AdditionalFailures = 1, nil
	if r, _ := FromSpec(once); r.Verdict != skew.Pass || r.Failure != "" {
		t.Errorf("passed at once: %+v; want pass", r)
	}
	twice := retried
	twice.State, twice.Failure = types.SpecStateFailed, types.Failure{Message: "still broken"}
	if r, _ := FromSpec(twice); r.Verdict != skew.Fail || !strings.Contains(r.Failure, "still broken") {
		t.Errorf("failed twice: %+v; want fail", r)
	}
}

// A flaky result round-trips through JUnit with its earlier failure, and
// is not written as a <failure> (it passed on its retry).
func TestFlakyJUnitRoundTrip(t *testing.T) {
	var buf strings.Builder
	in := Result{Name: "[seccomp/kubelet/enforce] t", ID: "seccomp/kubelet/enforce", Verdict: skew.Flaky,
		Reason: "pass on attempt 2 of 2 after a failure;", Failure: "Failure recorded during attempt 1:\nboom"}
	if err := WriteJUnit(&buf, Suite{Name: "seccomp", Results: []Result{in}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<failure") || !strings.Contains(buf.String(), "<system-err>") {
		t.Errorf("flaky case written as:\n%s", buf.String())
	}
	s, err := ReadJUnit(strings.NewReader(buf.String()))
	if err != nil || len(s) != 1 || len(s[0].Results) != 1 {
		t.Fatalf("%v %+v", err, s)
	}
	if got := s[0].Results[0]; got.Verdict != skew.Flaky || got.Failure != in.Failure {
		t.Errorf("read back %+v", got)
	}
}
