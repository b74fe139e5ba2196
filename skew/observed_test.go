package skew

import (
	"encoding/json"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

// TestObservedVerdictsAgreeWithOracle: every verdict a real cluster gave
// is the one the oracle gives at its versions and host now. A window
// moved against an observation fails here; so does one the observation
// never confirmed (a skip where a cluster judged).
func TestObservedVerdictsAgreeWithOracle(t *testing.T) {
	checkObserved(t, ObservedVerdicts())
}

func checkObserved(t testing.TB, ledger []ObservedVerdict) {
	for _, o := range ledger {
		h, err := o.Host()
		if err != nil {
			t.Errorf("%s at %s: runtime: %v", o.ID, o.Cluster(), err)
			continue
		}
		e, err := Expect(o.ID, release.MustParseVersion(o.Apiserver), release.MustParseVersion(o.KubeletVersion()), h)
		if err != nil {
			t.Errorf("%s at %s: %v", o.ID, o.Cluster(), err)
			continue
		}
		// The verdict of an observation that matched upstream.
		got := e.Verdict(!e.Deviation, true)
		if got != o.Verdict {
			t.Errorf("%s at %s (%s, %s): observed %s, the oracle now says %s (%s%s)", o.ID, o.Cluster(), o.Runtime, o.Run, o.Verdict, got, e.Reason, e.Skip)
		}
	}
}

// The check fails for a verdict the oracle does not give.
func TestObservedCheckCanFail(t *testing.T) {
	var ledger []ObservedVerdict
	if err := json.Unmarshal([]byte(`[
		{"id": "seccomp/create/field-to-annotation", "apiserver": "1.24.17", "kubelet": "1.24.17", "verdict": "pass", "run": "made up"},
		{"id": "seccomp/create/field-to-annotation", "apiserver": "1.26.15", "kubelet": "1.26.15", "verdict": "pass", "run": "made up"},
		{"id": "apparmor/kubelet/enforce", "apiserver": "1.37.2", "kubelet": "1.37.2", "verdict": "pass", "run": "made up"}]`), &ledger); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{}
	checkObserved(ft, ledger)
	// 1.24: the copy holds (KEP plans it stopped at v1.23: deviation);
	// 1.26: no copy (KEP: none either: pass); enforce without AppArmor: skip.
	if ft.errors != 2 {
		t.Errorf("errors for a made-up ledger: %d, want 2", ft.errors)
	}
}

type fakeT struct {
	testing.TB
	errors int
}

func (f *fakeT) Errorf(string, ...any) { f.errors++ }
