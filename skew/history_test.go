package skew

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

func historyServed(t *testing.T) []*version.Version {
	t.Helper()
	var served []*version.Version
	for m := 19; m <= 37; m++ {
		served = append(served, version.Must(version.NewVersion(fmt.Sprintf("1.%d.20", m))))
	}
	return append(served, HistoryPinned()...)
}

// The v1.25 leg's control plane is the pinned patch that builds; the
// v1.25 kubelet of the v1.27 leg is the newest served one.
func TestHistoryPinsTheControlPlaneThatBuilds(t *testing.T) {
	legs, err := History(historyServed(t))
	if err != nil {
		t.Fatal(err)
	}
	var cp, kl []string
	for _, l := range legs {
		if release.MinorOf(release.MustParseVersion(l.Apiserver)) == release.MustParseMinor("1.25") {
			cp = append(cp, l.Apiserver)
		}
		if release.MinorOf(release.MustParseVersion(l.Apiserver)) == release.MustParseMinor("1.27") {
			kl = l.Kubelets
		}
	}
	if !slices.Equal(cp, []string{"1.25.6"}) || !slices.Contains(kl, "1.25.20") {
		t.Errorf("v1.25 control planes %v, want [1.25.6]; the v1.27 leg's kubelets %v, want 1.25.20 (the newest served here) among them", cp, kl)
	}
	if _, err := History(historyServed(t)[:19]); err == nil {
		t.Error("History without the pinned version served: no error")
	}
}

// TestHistoryCoversEveryChange: for every change of an upstream window in
// the eras, a leg runs the rule's suite with the component at the minor
// before the change and a leg at the minor of the change.
func TestHistoryCoversEveryChange(t *testing.T) {
	legs, err := History(historyServed(t))
	if err != nil {
		t.Fatal(err)
	}
	at := func(c WindowChange, m release.Minor) bool {
		for _, l := range legs {
			if !slices.Contains(l.Suites, Family(c.ID)) {
				continue
			}
			vs := l.Kubelets
			if c.Component == Apiserver {
				vs = []string{l.Apiserver}
			}
			for _, v := range vs {
				if release.MinorOf(release.MustParseVersion(v)) == m {
					return true
				}
			}
		}
		return false
	}
	changes := HistoryChanges()
	if len(changes) < 10 {
		t.Fatalf("only %d changes found in the eras: %v", len(changes), changes)
	}
	for _, c := range changes {
		before := release.Minor{Major: c.At.Major, Minor: c.At.Minor - 1}
		if !at(c, before) || !at(c, c.At) {
			t.Errorf("%s changes at %s %s: no leg runs it at %s and at %s (legs %+v)", c.ID, c.Component, c.At, before, c.At, legs)
		}
	}
}

// TestHistoryLegsWithinPolicy: every leg's kubelets are ones its API
// server's skew policy allows, and every leg runs the seccomp suite.
func TestHistoryLegsWithinPolicy(t *testing.T) {
	legs, err := History(historyServed(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range legs {
		allowed := release.KubeletMinors(release.MustParseVersion(l.Apiserver))
		for _, k := range l.Kubelets {
			if !slices.Contains(allowed, release.MinorOf(release.MustParseVersion(k))) {
				t.Errorf("leg %s: kubelet %s is outside the skew policy (%v)", l.Apiserver, k, allowed)
			}
		}
		if !slices.Contains(l.Suites, "seccomp") {
			t.Errorf("leg %s runs %v, not the seccomp suite", l.Apiserver, l.Suites)
		}
		wantAA := !release.MinorOf(release.MustParseVersion(l.Apiserver)).Less(release.Minor{Major: 1, Minor: 29}) && !slices.ContainsFunc(l.Kubelets, func(k string) bool {
			return release.MinorOf(release.MustParseVersion(k)).Less(release.Minor{Major: 1, Minor: 29})
		})
		if slices.Contains(l.Suites, "apparmor") != wantAA {
			t.Errorf("leg %s %v: suites %v, want apparmor %v (AppArmor's sources were read from v1.29)", l.Apiserver, l.Kubelets, l.Suites, wantAA)
		}
	}
	if _, err := History(historyServed(t)[5:]); err == nil {
		t.Error("History with v1.20 not served: no error")
	}
}

// An upgrade between two releases where a rule was read at neither end
// lists no change for it: the end of seccomp's annotation era is five
// seccomp changes, not the AppArmor rules' "not researched" messages.
func TestUpgradeSkipsRulesReadAtNeitherEnd(t *testing.T) {
	cs, err := Upgrade(release.MustParseVersion("1.26.15"), release.MustParseVersion("1.27.16"), DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	want := []string{"seccomp/create/annotation-to-field", "seccomp/create/warning", "seccomp/template/no-sync", "seccomp/template/instantiation", "seccomp/kubelet/precedence"}
	if !slices.Equal(ids, want) {
		t.Errorf("upgrade 1.26.15 → 1.27.16 changes %v, want %v", ids, want)
	}
}
