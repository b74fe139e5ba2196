package skew

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

// outcomes lists every container outcome of an observation.
func outcomes(o Observation) []ContainerOutcome {
	out := append(append([]ContainerOutcome(nil), o.AnyOf...), o.Cases...)
	if o.Container != nil {
		out = append(out, *o.Container)
	}
	return out
}

// TestConfinedOutcomesNameAnEffect: wherever a rule expects a running
// container under a seccomp filter, a Localhost AppArmor profile or a
// runtime's default AppArmor profile that was read, at any version pair
// read and on every runtime variant, the outcome names the profile whose
// effect the harness must show by behaviour. A mode or label alone proves
// only "some profile".
func TestConfinedOutcomesNameAnEffect(t *testing.T) {
	hosts := []HostFacts{DefaultHost, host(t, "cri-o/1.34.0+crun/1.21"), host(t, "containerd/2.4.2+runc/1.5.2"), host(t, "cri-o/1.33.0+youki")}
	versions := append(append([]string(nil), seccompRead...), appArmorRead...)
	for _, r := range Rules() {
		for _, a := range versions {
			for _, k := range versions {
				av, kv := release.MustParseVersion(a), release.MustParseVersion(k)
				if release.CheckSkew(av, kv) != nil {
					continue
				}
				for _, h := range hosts {
					e := r.expect(av, kv, h)
					for _, o := range append(outcomes(e.Expected), outcomes(e.KEPPlanned)...) {
						if o.State != Running {
							continue
						}
						seccompFilter := o.SeccompMode != nil && *o.SeccompMode == 2
						localhostAA := strings.HasPrefix(o.AppArmorProfile, OwnAppArmorPrefix)
						defaultAA := o.AppArmorProfile != "" && o.AppArmorProfile == RuntimeDefaultAppArmorProfile(h.Runtime)
						// seccomp/failure/row-2's SCMP_ACT_LOG case is shown by
						// its spec (the kernel log line of the allowed call);
						// apparmor/kubelet/privileged-default's runtime default
						// by its spec, against its own Unconfined container.
						if (seccompFilter || localhostAA || defaultAA) && o.Effect == "" && o.Case != CaseLogMkdir && o.Case != CaseRuntimeDefault {
							t.Errorf("%s at %s/%s on %s: running outcome %+v names no effect", r.ID, a, k, describeRuntime(h), o)
						}
					}
				}
			}
		}
	}
}

// TestInheritRulesUseAProfileUnlikeTheDefault: where a container gets its
// seccomp profile from the pod level, the expected effect is the
// Localhost deny-mkdir profile's, which the runtime default does not have.
func TestInheritRulesUseAProfileUnlikeTheDefault(t *testing.T) {
	for _, c := range []struct{ id, apiserver, kubelet string }{
		{"seccomp/ephemeral/inherit", "1.37.2", "1.37.2"},
		{"seccomp/kubelet/precedence", "1.37.2", "1.34.4"},
		{"seccomp/update/annotation-ignored", "1.37.2", "1.37.2"},
	} {
		e, err := Expect(c.id, release.MustParseVersion(c.apiserver), release.MustParseVersion(c.kubelet), DefaultHost)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Observation{e.Expected, e.KEPPlanned} {
			if o.Container == nil || o.Container.Effect != EffectSeccompDenyMkdir {
				t.Errorf("%s: want the deny-mkdir effect, got %+v", c.id, o.Container)
			}
		}
	}
}

// TestPrecedenceAssertsTheStoredField: at API servers that copy the
// container annotation to the field (to v1.26), the field Unconfined is
// what makes the container unconfined, and it is asserted.
func TestPrecedenceAssertsTheStoredField(t *testing.T) {
	for _, a := range []string{"1.23.17", "1.24.17", "1.25.16", "1.26.15"} {
		e, err := Expect("seccomp/kubelet/precedence", release.MustParseVersion(a), release.MustParseVersion(a), DefaultHost)
		if err != nil {
			t.Fatal(err)
		}
		if e.Expected.Fields[ContainerSeccompType] != "Unconfined" || e.Expected.Container == nil || *e.Expected.Container.SeccompMode != 0 {
			t.Errorf("at v%s: want the stored container field Unconfined and Seccomp: 0, got %+v", a, e.Expected)
		}
	}
	e, _ := Expect("seccomp/kubelet/precedence", release.MustParseVersion("1.27.16"), release.MustParseVersion("1.27.16"), DefaultHost)
	if _, ok := e.Expected.Fields[ContainerSeccompType]; ok {
		t.Errorf("at v1.27: no copy, no field asserted: %+v", e.Expected)
	}
}

// TestUnreadRuntimeStillConfines: on a runtime whose default AppArmor
// profile was not read, the runtime default is still asserted to confine,
// in either phase (the KEP's Phase 3 of a static pod names it while
// upstream names the Localhost profile), and the rule says its runtime
// was not researched.
func TestUnreadRuntimeStillConfines(t *testing.T) {
	unread := host(t, "cri-o/1.33.0+youki")
	e, err := Expect("apparmor/static-pod/annotation-copy", release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), unread)
	if err != nil {
		t.Fatal(err)
	}
	if c := e.KEPPlanned.Container; c == nil || c.AppArmorProfile != RuntimeDefaultMarker {
		t.Errorf("KEP Phase 3 on an unread runtime: want the runtime default asserted, got %+v", c)
	}
	if c := e.Expected.Container; c == nil || c.AppArmorProfile != aaEnforcedLocal || c.Effect != EffectAppArmorDenyWrite {
		t.Errorf("upstream: want %s with its effect, got %+v", aaEnforcedLocal, c)
	}
	if !strings.Contains(e.RuntimeNotResearched, "not researched") {
		t.Errorf("the KEP phase names the runtime default: want RuntimeNotResearched, got %q", e.RuntimeNotResearched)
	}
	e, _ = Expect("apparmor/create/empty-annotation", release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), unread)
	if c := e.Expected.Container; c == nil || c.AppArmorProfile != RuntimeDefaultMarker || c.Effect != "" {
		t.Errorf("empty-annotation on an unread runtime: want the runtime default asserted without the effect of a profile nobody read, got %+v", c)
	}
	e, _ = Expect("apparmor/create/empty-annotation", release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), DefaultHost)
	if c := e.Expected.Container; c == nil || c.AppArmorProfile != "cri-containerd.apparmor.d (enforce)" || c.Effect != EffectAppArmorRuntimeDefault {
		t.Errorf("empty-annotation on containerd: want its default profile with its effect, got %+v", c)
	}
}

func TestConfinedByRuntimeDefault(t *testing.T) {
	for label, want := range map[string]bool{
		"cri-containerd.apparmor.d (enforce)": true,
		"vendor-default (enforce)":            true,
		"unconfined":                          false,
		"vendor-default (complain)":           false,
		"skewproof-deny-write (enforce)":      false,
		" (enforce)":                          false,
		"":                                    false,
	} {
		if got := ConfinedByRuntimeDefault(label); got != want {
			t.Errorf("ConfinedByRuntimeDefault(%q) = %v, want %v", label, got, want)
		}
	}
}
