package reports

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// A certification accepts no skip but for a fact of the release: a host
// without AppArmor or a cluster without node access is a failure with its
// remedy; the release's own skip stands; a not-researched skip stays a
// skip (it is not green already).
func TestCertify(t *testing.T) {
	rs := []Result{
		{ID: "apparmor/kubelet/enforce", Node: "w1", Verdict: skew.Skip, SkipKind: SkipHost, Reason: "host has no AppArmor"},
		{ID: "profiles/node-status/partial", Verdict: skew.Skip, SkipKind: SkipCluster, Reason: "needs docker access to the node containers"},
		{ID: "seccomp/kubelet/other", Node: "w1", Verdict: skew.Skip, Reason: "a skip that names no kind"},
		{ID: "apparmor/feature-gate", Verdict: skew.Skip, SkipKind: SkipRelease, Reason: "the AppArmor gate is gone at v1.37"},
		{ID: "seccomp/api/x", Verdict: skew.Skip, SkipKind: SkipHost, NotResearched: "not researched at v1.38.0", Reason: "not researched"},
		{ID: "seccomp/api/types", Verdict: skew.Pass},
	}
	if ok, _ := CertifiedGreen(rs); ok {
		t.Error("CertifiedGreen: host and cluster skips are green")
	}
	got := Certify(rs)
	for i, want := range []skew.Verdict{skew.Fail, skew.Fail, skew.Fail, skew.Skip, skew.Skip, skew.Pass} {
		if got[i].Verdict != want {
			t.Errorf("%s (%s): %s, want %s", rs[i].ID, rs[i].SkipKind, got[i].Verdict, want)
		}
	}
	if f := got[0].Failure; got[0].Reason != CertificationFailure || !strings.Contains(f, "host has no AppArmor") || !strings.Contains(f, "--apparmor-node") {
		t.Errorf("host skip: %+v, want a failure with the reason and the remedy --apparmor-node", got[0])
	}
	if ok, why := CertifiedGreen(got[3:4]); !ok {
		t.Errorf("a release's skip alone: not certified: %s", why)
	}
}
