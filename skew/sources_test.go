package skew

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

// TestSourcesRead: every rule names the releases it was read in, one per
// minor, oldest first, without a gap, within what the Go module proxy
// serves by exact version (v1.19 on).
func TestSourcesRead(t *testing.T) {
	for _, r := range Rules() {
		if len(r.Read) == 0 {
			t.Errorf("%s: no sources read", r.ID)
			continue
		}
		for i, s := range r.Read {
			v, err := release.ParseVersion(s)
			if err != nil {
				t.Errorf("%s: read release %q: %v", r.ID, s, err)
				continue
			}
			if i > 0 {
				prev := release.MinorOf(release.MustParseVersion(r.Read[i-1]))
				if want := (release.Minor{Major: prev.Major, Minor: prev.Minor + 1}); release.MinorOf(v) != want {
					t.Errorf("%s: read v%s after v%s; want one release of every minor (v%s next)", r.ID, s, r.Read[i-1], want)
				}
			}
		}
		if w := r.Read.Window(); !w.ContainsMinor(release.Minor{Major: 1, Minor: 29}) || !w.ContainsMinor(release.Minor{Major: 1, Minor: 37}) {
			t.Errorf("%s: sources read %s do not cover the served releases v1.29 … v1.37", r.ID, r.Read)
		}
	}
	if got := seccompRead.String(); got != "v1.19.16 … v1.37.2" {
		t.Errorf("seccompRead = %s", got)
	}
	if got := appArmorRead.String(); got != "v1.29.6 … v1.37.2" {
		t.Errorf("appArmorRead = %s", got)
	}
}

// TestNotResearchedSkips: outside the releases whose sources were read a
// rule answers skip, "not researched", with the version that is outside and
// the releases read; never pass, never deviation. Apiserver rules look at
// the kube-apiserver, kubelet rules at the kubelet and the kube-apiserver.
func TestNotResearchedSkips(t *testing.T) {
	cases := []struct {
		apiserver, kubelet string
		// outside returns the component and version outside the reading
		// for rule r, or "" when the rule must answer.
		outside func(r Rule) string
	}{
		// A future release: nothing read.
		{"1.38.0", "1.37.2", func(r Rule) string { return "kube-apiserver v1.38.0" }},
		{"1.38.0", "1.38.0", func(r Rule) string {
			if r.Component == Kubelet {
				return "kubelet v1.38.0"
			}
			return "kube-apiserver v1.38.0"
		}},
		// Before the seccomp fields: nothing read.
		{"1.18.20", "1.18.20", func(r Rule) string {
			if r.Component == Kubelet {
				return "kubelet v1.18.20"
			}
			return "kube-apiserver v1.18.20"
		}},
		// v1.23: seccomp read, AppArmor not.
		{"1.23.17", "1.23.17", func(r Rule) string {
			switch {
			case strings.HasPrefix(r.ID, "seccomp/"):
				return ""
			case r.Component == Kubelet:
				return "kubelet v1.23.17"
			}
			return "kube-apiserver v1.23.17"
		}},
		// A read kube-apiserver with a kubelet older than the AppArmor
		// reading: only the AppArmor kubelet rules skip.
		{"1.29.6", "1.26.15", func(r Rule) string {
			if strings.HasPrefix(r.ID, "apparmor/") && r.Component == Kubelet {
				return "kubelet v1.26.15"
			}
			return ""
		}},
	}
	for _, c := range cases {
		for _, r := range Rules() {
			t.Run(fmt.Sprintf("%s/%s/%s", c.apiserver, c.kubelet, r.ID), func(t *testing.T) {
				e, err := Expect(r.ID, release.MustParseVersion(c.apiserver), release.MustParseVersion(c.kubelet), DefaultHost)
				if err != nil {
					t.Fatal(err)
				}
				out := c.outside(r)
				if out == "" {
					if strings.Contains(e.Skip, "not researched") || e.Phase == "not researched" {
						t.Errorf("inside the releases read, but skip %q, phase %q", e.Skip, e.Phase)
					}
					return
				}
				want := fmt.Sprintf("not researched at %s (sources read: %s)", out, r.Read)
				if !strings.Contains(e.Skip, want) {
					t.Errorf("skip = %q, want it to contain %q", e.Skip, want)
				}
				if e.Deviation || e.Expected.NotApplicable == "" || e.Phase != "not researched" {
					t.Errorf("deviation %v, phase %q, expected %s: want no deviation and no expected observation", e.Deviation, e.Phase, describe(e.Expected))
				}
				for _, m := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
					if v := e.Verdict(m[0], m[1]); v != Skip {
						t.Errorf("verdict %s for matches %v, want skip", v, m)
					}
				}
				if !strings.Contains(e.Reason, want) {
					t.Errorf("reason %q does not say %q", e.Reason, want)
				}
				// The KEP column still says what the KEP plans.
				if e.KEPPhase == "" || e.KEPPhase == "not researched" {
					t.Errorf("KEP phase %q", e.KEPPhase)
				}
			})
		}
	}
}

// TestServedPairsAreResearched: every pair skewproof can build (the served
// releases v1.29 … v1.37 within the skew policy) is inside every rule's
// reading, so its answers are the researched ones.
func TestServedPairsAreResearched(t *testing.T) {
	served := []string{"1.29.6", "1.30.14", "1.31.14", "1.32.13", "1.33.13", "1.34.4", "1.35.4", "1.36.3", "1.37.2"}
	for _, a := range served {
		for _, k := range served {
			if release.CheckSkew(release.MustParseVersion(a), release.MustParseVersion(k)) != nil {
				continue
			}
			es, err := Simulate(release.MustParseVersion(a), release.MustParseVersion(k), DefaultHost)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if strings.Contains(e.Skip, "not researched") || e.Phase == "not researched" {
					t.Errorf("%s at %s/%s: %s", e.ID, a, k, e.Skip)
				}
			}
		}
	}
}

// TestDeviationsStayInsideTheReading: no deviation is claimed for a minor
// whose sources were not read, however wide the range asked.
func TestDeviationsStayInsideTheReading(t *testing.T) {
	for _, d := range Deviations(release.Minor{Major: 1, Minor: 10}, release.Minor{Major: 1, Minor: 45}) {
		r, _ := RuleByID(d.ID)
		for _, m := range d.Minors {
			if !r.Read.Window().ContainsMinor(release.MustParseMinor(m)) {
				t.Errorf("%s: deviation claimed at v%s, outside the sources read (%s)", d.ID, m, r.Read)
			}
		}
	}
}

func TestWindowIntersect(t *testing.T) {
	cases := []struct {
		a, b release.Window
		want string
	}{
		{release.Window{}, win("1.19", "1.38"), "v1.19 to v1.37"},
		{win("1.27", ""), win("1.19", "1.38"), "v1.27 to v1.37"},
		{win("", "1.31"), win("1.29", "1.38"), "v1.29 to v1.30"},
		{win("1.30", "1.34"), win("1.29", "1.38"), "v1.30 to v1.33"},
		{win("1.30", ""), release.Window{}, "v1.30 onwards"},
	}
	for _, c := range cases {
		if got := c.a.Intersect(c.b).String(); got != c.want {
			t.Errorf("%s ∩ %s = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}
