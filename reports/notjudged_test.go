package reports

import (
	"reflect"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// TestNotJudgedForHost: host skips grouped by reason with their nodes and
// ids; skips of the release or of the cluster, and judged specs, are not
// listed.
func TestNotJudgedForHost(t *testing.T) {
	rs := []Result{
		{ID: "apparmor/kubelet/enforce", Node: "w2", Verdict: skew.Skip, SkipKind: SkipHost, Reason: "needs AppArmor"},
		{ID: "apparmor/kubelet/enforce", Node: "w1", Verdict: skew.Skip, SkipKind: SkipHost, Reason: "needs AppArmor"},
		{ID: "apparmor/failure/row-1", Node: "w1", Verdict: skew.Skip, SkipKind: SkipHost, Reason: "needs AppArmor"},
		{ID: "apparmor/failure/row-6", Node: "u1", Verdict: skew.Skip, SkipKind: SkipHost, Reason: "needs a host without AppArmor"},
		{ID: "apparmor/kubelet/enforce", Node: "u1", Verdict: skew.Pass},
		{ID: "seccomp/api/x", Verdict: skew.Skip, SkipKind: SkipRelease, Reason: "not in this release"},
		{ID: "profiles/y", Node: "w1", Verdict: skew.Skip, SkipKind: SkipCluster, Reason: "no node access"},
	}
	want := []string{
		"needs AppArmor: 2 ids on node w1, node w2: apparmor/failure/row-1, apparmor/kubelet/enforce",
		"needs a host without AppArmor: 1 ids on node u1: apparmor/failure/row-6",
	}
	if got := NotJudgedForHost(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("NotJudgedForHost =\n%q\nwant\n%q", got, want)
	}
	if got := NotJudgedForHost(rs[4:]); got != nil {
		t.Errorf("no host skips: %q, want none", got)
	}
}
