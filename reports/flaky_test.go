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

// A flaky result is a failure for JUnit readers: its case carries a
// <failure> that says it was flaky and gives the first failure, and the
// suite counts it; it round-trips as flaky. Only a run that tolerated
// flakes (--allow-flaky) writes it without a <failure>, and says so.
func TestFlakyJUnitRoundTrip(t *testing.T) {
	in := Result{Name: "[seccomp/kubelet/enforce] t", ID: "seccomp/kubelet/enforce", Verdict: skew.Flaky,
		Reason: "pass on attempt 2 of 2 after a failure;", Failure: "Failure recorded during attempt 1:\nmkdir: ok\nmore"}
	for _, tolerated := range []bool{false, true} {
		var buf strings.Builder
		if err := WriteJUnit(&buf, Suite{Name: "seccomp", Results: []Result{in}, FlakyTolerated: tolerated}); err != nil {
			t.Fatal(err)
		}
		doc := buf.String()
		failure := `<failure message="flaky: failed, then passed on a retry; first failure: mkdir: ok" type="Flaky">`
		switch {
		case !tolerated && (!strings.Contains(doc, failure) || !strings.Contains(doc, `failures="1"`)):
			t.Errorf("flaky case written as:\n%s\nwant %s, counted as a failure", doc, failure)
		case tolerated && (strings.Contains(doc, "<failure") || !strings.Contains(doc, "<system-err>") || !strings.Contains(doc, `name="flaky-tolerated" value="true"`)):
			t.Errorf("tolerated flaky case written as:\n%s", doc)
		}
		s, err := ReadJUnit(strings.NewReader(doc))
		if err != nil || len(s) != 1 || len(s[0].Results) != 1 {
			t.Fatalf("%v %+v", err, s)
		}
		if got := s[0].Results[0]; got.Verdict != skew.Flaky || got.Failure != in.Failure || s[0].FlakyTolerated != tolerated {
			t.Errorf("read back %+v (tolerated %v)", got, s[0].FlakyTolerated)
		}
	}
}

func TestGreen(t *testing.T) {
	for _, c := range []struct {
		verdicts []skew.Verdict
		tolerate bool
		want     bool
	}{
		{[]skew.Verdict{skew.Pass, skew.Deviation, skew.Skip}, false, true},
		{[]skew.Verdict{skew.Pass, skew.Fail}, true, false},
		{[]skew.Verdict{skew.Pass, skew.Flaky}, false, false},
		{[]skew.Verdict{skew.Pass, skew.Flaky}, true, true},
	} {
		var rs []Result
		for _, v := range c.verdicts {
			rs = append(rs, Result{Verdict: v})
		}
		if got := Green(rs, c.tolerate); got != c.want {
			t.Errorf("Green(%v, tolerate flaky %v) = %v, want %v", c.verdicts, c.tolerate, got, c.want)
		}
	}
	// A skip for a fact of the cluster is green; one for want of read
	// sources is not, and the mark survives JUnit.
	host := Result{ID: "apparmor/kubelet/enforce", Verdict: skew.Skip, Reason: "host has no AppArmor"}
	unread := Result{ID: "seccomp/api/types", Verdict: skew.Skip, Reason: "not researched at kube-apiserver v1.38.0",
		NotResearched: "not researched at kube-apiserver v1.38.0 (sources read: v1.19.16-v1.37.2)"}
	if !Green([]Result{host}, false) || Green([]Result{host, unread}, true) {
		t.Errorf("Green: a host skip must be green, a not-researched skip never")
	}
	var buf strings.Builder
	if err := WriteJUnit(&buf, Suite{Name: "seccomp", Results: []Result{unread}}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadJUnit(strings.NewReader(buf.String()))
	if err != nil || len(NotResearched(s[0].Results)) != 1 {
		t.Errorf("not-researched lost in JUnit (%v):\n%s", err, buf.String())
	}
}
