package skew

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew/release"
)

// caseOutcome returns the one outcome of case name in o, failing the test
// when there is none or several.
func caseOutcome(t *testing.T, o Observation, name string) ContainerOutcome {
	t.Helper()
	var got []ContainerOutcome
	for _, c := range o.Cases {
		if c.Case == name {
			got = append(got, c)
		}
	}
	if len(got) != 1 {
		t.Fatalf("case %q: want one outcome, got %+v", name, got)
	}
	return got[0]
}

func expectAt(t *testing.T, id, apiserver, kubelet string, host HostFacts) Expectation {
	t.Helper()
	e, err := Expect(id, release.MustParseVersion(apiserver), release.MustParseVersion(kubelet), host)
	if err != nil {
		t.Fatalf("Expect(%s, %s, %s): %v", id, apiserver, kubelet, err)
	}
	return e
}

// TestContainerRulesEveryContainerConfined: wherever the rules apply, a
// container without a profile of its own is expected to show the pod's
// profile by its effect, and one with its own profile to show that
// instead; plan and upstream agree.
func TestContainerRulesEveryContainerConfined(t *testing.T) {
	denyMkdir := func(c ContainerOutcome) bool {
		return c.SeccompMode != nil && *c.SeccompMode == 2 && strings.Contains(c.Note, "EPERM")
	}
	unconfinedSeccomp := func(c ContainerOutcome) bool { return c.SeccompMode != nil && *c.SeccompMode == 0 }
	denyWrite := func(c ContainerOutcome) bool {
		return c.AppArmorProfile == names.AppArmorLocalhostProfile+" (enforce)" && strings.Contains(c.Note, "EACCES")
	}
	for _, tc := range []struct {
		id    string
		cases map[string]func(ContainerOutcome) bool
	}{
		{"seccomp/kubelet/init-containers", map[string]func(ContainerOutcome) bool{CaseInit: denyMkdir, CaseInitOwn: unconfinedSeccomp}},
		{"seccomp/kubelet/sidecar", map[string]func(ContainerOutcome) bool{CaseSidecar: denyMkdir, CaseSidecarOwn: unconfinedSeccomp}},
		{"seccomp/kubelet/second-container", map[string]func(ContainerOutcome) bool{CaseSecond: denyMkdir, CaseOwn: unconfinedSeccomp}},
		{"apparmor/kubelet/init-containers", map[string]func(ContainerOutcome) bool{CaseInit: denyWrite}},
		{"apparmor/kubelet/sidecar", map[string]func(ContainerOutcome) bool{CaseSidecar: denyWrite}},
		{"apparmor/kubelet/second-container", map[string]func(ContainerOutcome) bool{CaseSecond: denyWrite,
			CaseOwn: func(c ContainerOutcome) bool { return c.AppArmorProfile == "unconfined" }}},
	} {
		for _, v := range []string{"1.33.13", "1.37.2"} {
			e := expectAt(t, tc.id, v, v, DefaultHost)
			if e.Skip != "" || e.Deviation || e.Expected.NotApplicable != "" {
				t.Errorf("%s at v%s: want a judged rule without deviation, got skip %q, deviation %v, n/a %q", tc.id, v, e.Skip, e.Deviation, e.Expected.NotApplicable)
				continue
			}
			if len(e.Expected.Cases) != len(tc.cases) {
				t.Errorf("%s at v%s: want %d cases, got %+v", tc.id, v, len(tc.cases), e.Expected.Cases)
			}
			for name, ok := range tc.cases {
				if c := caseOutcome(t, e.Expected, name); c.State != Running || !ok(c) {
					t.Errorf("%s at v%s, case %s: unexpected outcome %+v", tc.id, v, name, c)
				}
			}
		}
	}
}

// TestSidecarRulesStartWithSidecars: restartable init containers are off by
// default before v1.29 (SidecarContainers alpha in v1.28), so the sidecar
// rules are not applicable there, with the reason; at v1.29 the seccomp
// one applies. The AppArmor one needs the fields too (v1.30).
func TestSidecarRulesStartWithSidecars(t *testing.T) {
	e := expectAt(t, "seccomp/kubelet/sidecar", "1.28.15", "1.28.15", DefaultHost)
	if !strings.Contains(e.Expected.NotApplicable, "SidecarContainers") || e.Verdict(true, true) != Skip {
		t.Errorf("seccomp/kubelet/sidecar at v1.28: want not applicable (SidecarContainers), got %+v", e.Expected)
	}
	// A kubelet of v1.28 under an API server of v1.29: the kubelet decides.
	if e := expectAt(t, "seccomp/kubelet/sidecar", "1.29.6", "1.28.15", DefaultHost); e.Expected.NotApplicable == "" {
		t.Errorf("seccomp/kubelet/sidecar with kubelet v1.28 under API server v1.29: want not applicable, got %+v", e.Expected)
	}
	e = expectAt(t, "seccomp/kubelet/sidecar", "1.29.6", "1.29.6", DefaultHost)
	if e.Expected.NotApplicable != "" || len(e.Expected.Cases) != 2 {
		t.Errorf("seccomp/kubelet/sidecar at v1.29: want the cases, got %+v", e.Expected)
	}
	e = expectAt(t, "apparmor/kubelet/sidecar", "1.29.6", "1.29.6", DefaultHost)
	if e.Expected.NotApplicable == "" {
		t.Errorf("apparmor/kubelet/sidecar at v1.29: want not applicable (no fields), got %+v", e.Expected)
	}
	e = expectAt(t, "apparmor/kubelet/sidecar", "1.30.14", "1.30.14", DefaultHost)
	if e.Expected.NotApplicable != "" || len(e.Expected.Cases) != 1 {
		t.Errorf("apparmor/kubelet/sidecar at v1.30: want the case, got %+v", e.Expected)
	}
	// Init containers have always existed: the seccomp rule applies from
	// the fields on.
	if e := expectAt(t, "seccomp/kubelet/init-containers", "1.19.16", "1.19.16", DefaultHost); e.Expected.NotApplicable != "" {
		t.Errorf("seccomp/kubelet/init-containers at v1.19: want it to apply, got %+v", e.Expected)
	}
}

// TestPrivilegedDefault: a privileged container without a profile runs
// unconfined on every runtime (the KEP's default for privileged pods); the
// non-privileged twin runs under the default profile of the node's runtime,
// named where it was read; on a host without AppArmor the rule skips.
func TestPrivilegedDefault(t *testing.T) {
	const id = "apparmor/kubelet/privileged-default"
	for _, tc := range []struct {
		runtime, want string
	}{
		{"containerd", "cri-containerd.apparmor.d (enforce)"},
		{"cri-o", "crio-default (enforce)"},
	} {
		h := DefaultHost
		h.Runtime = tc.runtime
		e := expectAt(t, id, "1.37.2", "1.34.4", h)
		if c := caseOutcome(t, e.Expected, CasePrivileged); c.AppArmorProfile != "unconfined" {
			t.Errorf("%s: privileged: want unconfined, got %+v", tc.runtime, c)
		}
		if c := caseOutcome(t, e.Expected, CaseRuntimeDefault); c.AppArmorProfile != tc.want {
			t.Errorf("%s: non-privileged: want %q, got %+v", tc.runtime, tc.want, c)
		}
		if c := caseOutcome(t, e.KEPPlanned, CasePrivileged); c.AppArmorProfile != "unconfined" {
			t.Errorf("%s: the KEP plans unconfined for a privileged container, got %+v", tc.runtime, c)
		}
	}
	noAA := DefaultHost
	noAA.AppArmor = false
	if e := expectAt(t, id, "1.37.2", "1.37.2", noAA); !strings.Contains(e.Skip, "no AppArmor") {
		t.Errorf("without AppArmor: want a skip, got %q", e.Skip)
	}
	// The KEP fixes unconfined for privileged containers; a runtime nobody
	// read still has it asserted, only the default profile's name is not.
	h := DefaultHost
	h.Runtime = "unread-runtime"
	e := expectAt(t, id, "1.37.2", "1.37.2", h)
	if c := caseOutcome(t, e.Expected, CasePrivileged); c.AppArmorProfile != "unconfined" {
		t.Errorf("unread runtime: privileged: want unconfined asserted, got %+v", c)
	}
	if e.RuntimeNotResearched == "" {
		t.Errorf("unread runtime: want the default profile marked not researched")
	}
}

// A v1.30 API server copies the fields to the annotations that a v1.29
// kubelet reads: the field rules hold there, and not where the API server
// has no fields (observed: a 1.30.14 API server with a 1.29.15 kubelet).
func TestAppArmorFieldsEnforcedOnTrailingKubelets(t *testing.T) {
	for _, id := range []string{"apparmor/kubelet/precedence", "apparmor/kubelet/init-containers", "apparmor/kubelet/sidecar", "apparmor/kubelet/second-container"} {
		e := expectAt(t, id, "1.30.14", "1.29.15", DefaultHost)
		if e.Skip != "" || e.Expected.NotApplicable != "" || e.KEPPlanned.NotApplicable != "" || e.Deviation {
			t.Errorf("%s at 1.30.14/1.29.15: skip %q, n/a %q (KEP %q), deviation %v; want the fields' outcome", id, e.Skip, e.Expected.NotApplicable, e.KEPPlanned.NotApplicable, e.Deviation)
		}
		if e = expectAt(t, id, "1.29.15", "1.29.15", DefaultHost); e.Expected.NotApplicable == "" {
			t.Errorf("%s at 1.29.15/1.29.15: %q; want not applicable (no fields)", id, e.Expected.Summary)
		}
	}
}

// An ephemeral container on a kubelet that trails a v1.30 API server gets
// no annotation, and that kubelet reads nothing else: it runs under the
// runtime's default, a deviation from the KEP's "same rules"; where the API
// server has no fields the scenario does not exist.
func TestAppArmorEphemeralOnTrailingKubelets(t *testing.T) {
	for _, id := range []string{"apparmor/ephemeral/inherit", "apparmor/ephemeral/override"} {
		e := expectAt(t, id, "1.30.14", "1.29.15", DefaultHost)
		if e.Skip != "" || !e.Deviation || e.Expected.Container == nil || e.Expected.Container.AppArmorProfile != RuntimeDefaultAppArmorProfile("containerd") {
			t.Errorf("%s at 1.30.14/1.29.15: skip %q, deviation %v, expected %+v; want the runtime default, a deviation", id, e.Skip, e.Deviation, e.Expected.Container)
		}
		if e = expectAt(t, id, "1.29.15", "1.29.15", DefaultHost); e.Expected.NotApplicable == "" || e.KEPPlanned.NotApplicable == "" {
			t.Errorf("%s at 1.29.15/1.29.15: %q / %q; want not applicable (no fields)", id, e.Expected.Summary, e.KEPPlanned.Summary)
		}
		if e = expectAt(t, id, "1.30.14", "1.30.14", DefaultHost); e.Deviation || e.Expected.NotApplicable != "" {
			t.Errorf("%s at 1.30.14/1.30.14: deviation %v, %q", id, e.Deviation, e.Expected.Summary)
		}
	}
}
