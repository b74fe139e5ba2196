package skew

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

func TestExpectBadInput(t *testing.T) {
	v := release.MustParseVersion
	cases := []struct {
		id, apiserver, kubelet, errFrag string
	}{
		{"seccomp/api/nope", "1.37.2", "1.37.2", "unknown scenario id"},
		{"profiles/node-status/per-node", "1.37.2", "1.37.2", "unknown scenario id"},
		{"seccomp/api/types", "1.37.2", "1.33.13", "trails kube-apiserver"},
		{"seccomp/api/types", "1.34.4", "1.35.4", "newer than kube-apiserver"},
	}
	for _, c := range cases {
		_, err := Expect(c.id, v(c.apiserver), v(c.kubelet), DefaultHost)
		if err == nil || !strings.Contains(err.Error(), c.errFrag) {
			t.Errorf("Expect(%s, %s, %s) = %v, want error containing %q", c.id, c.apiserver, c.kubelet, err, c.errFrag)
		}
	}
}

func TestExpectEvaluatesTheRightComponent(t *testing.T) {
	// Apiserver 1.37 with kubelet 1.34: the apiserver rule follows 1.37,
	// the kubelet rule follows 1.34.
	e, err := Expect("apparmor/failure/row-5", release.MustParseVersion("1.37.2"), release.MustParseVersion("1.34.4"), HostFacts{Seccomp: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.Version != "1.34.4" || e.Component != Kubelet {
		t.Errorf("kubelet rule evaluated at %s (%s)", e.Version, e.Component)
	}
	e, err = Expect("apparmor/create/field-to-annotation", release.MustParseVersion("1.34.4"), release.MustParseVersion("1.31.14"), DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	if e.Version != "1.34.4" || len(e.Expected.AbsentAnnotations) == 0 {
		t.Errorf("apiserver rule evaluated at %s: %s", e.Version, describe(e.Expected))
	}
}

func TestVerdict(t *testing.T) {
	dev := Expectation{Deviation: true}
	same := Expectation{}
	cases := []struct {
		e       Expectation
		kep, up bool
		want    Verdict
	}{
		{same, true, true, Pass},
		{same, false, false, Fail},
		{same, false, true, Fail}, // no deviation recorded: only the plan counts
		{dev, false, true, Deviation},
		{dev, true, false, Pass},
		{dev, false, false, Fail},
		{Expectation{Skip: "host has no AppArmor"}, true, true, Skip},
		{Expectation{Expected: Observation{NotApplicable: "gate removed"}}, true, true, Skip},
	}
	for i, c := range cases {
		if got := c.e.Verdict(c.kep, c.up); got != c.want {
			t.Errorf("case %d: Verdict = %s, want %s", i, got, c.want)
		}
	}
}

func TestHostConditions(t *testing.T) {
	v := release.MustParseVersion("1.37.2")
	cases := []struct {
		id   string
		host HostFacts
		skip string
	}{
		{"apparmor/kubelet/enforce", HostFacts{Seccomp: true, Runtime: "containerd"}, "host has no AppArmor"},
		{"apparmor/kubelet/enforce", DefaultHost, ""},
		{"apparmor/failure/row-6", DefaultHost, "needs a host without AppArmor"},
		{"apparmor/failure/row-6", HostFacts{Seccomp: true}, ""},
		{"seccomp/kubelet/enforce", HostFacts{AppArmor: true}, "host has no seccomp"},
		{"seccomp/api/types", HostFacts{}, ""},
	}
	for _, c := range cases {
		e, err := Expect(c.id, v, v, c.host)
		if err != nil {
			t.Fatal(err)
		}
		if c.skip == "" && e.Skip != "" || c.skip != "" && !strings.Contains(e.Skip, c.skip) {
			t.Errorf("%s on %+v: skip = %q, want %q", c.id, c.host, e.Skip, c.skip)
		}
	}
}

func TestSimulate(t *testing.T) {
	es, err := Simulate(release.MustParseVersion("1.37.2"), release.MustParseVersion("1.34.4"), DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(Rules()) {
		t.Fatalf("%d expectations for %d rules", len(es), len(Rules()))
	}
	if _, err := Simulate(release.MustParseVersion("1.37.2"), release.MustParseVersion("1.32.13"), DefaultHost); err == nil {
		t.Error("skew beyond policy accepted")
	}
}

func TestUpgrade(t *testing.T) {
	cs, err := Upgrade(release.MustParseVersion("1.33.13"), release.MustParseVersion("1.37.2"), DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		got[c.ID] = c.Behaviour
	}
	if b, ok := got["apparmor/create/field-to-annotation"]; !ok || !b {
		t.Errorf("field-to-annotation should change behaviour across 1.33→1.37: %v", got)
	}
	if b, ok := got["apparmor/create/annotation-to-field"]; !ok || b {
		t.Errorf("annotation-to-field changes only in the KEP plan across 1.33→1.37: %v", got)
	}
	for id := range got {
		if strings.HasPrefix(id, "seccomp/") {
			t.Errorf("%s changes across 1.33→1.37, but seccomp behaves the same in both", id)
		}
	}
	none, err := Upgrade(release.MustParseVersion("1.34.0"), release.MustParseVersion("1.34.4"), DefaultHost)
	if err != nil || len(none) != 0 {
		t.Errorf("patch upgrade: %d changes, %v", len(none), err)
	}
	if _, err := Upgrade(release.MustParseVersion("1.37.2"), release.MustParseVersion("1.33.13"), DefaultHost); err == nil || !strings.Contains(err.Error(), "backwards") {
		t.Errorf("reversed upgrade: %v", err)
	}
}

func TestDeviations(t *testing.T) {
	ds := Deviations(release.Minor{Major: 1, Minor: 29}, release.Minor{Major: 1, Minor: 37})
	want := map[string]string{
		"apparmor/create/annotation-to-field":  "1.36,1.37",
		"apparmor/static-pod/annotation-copy":  "1.36,1.37",
		"apparmor/failure/row-5":               "1.31,1.32,1.33,1.34,1.35,1.36,1.37",
		"apparmor/api/runtime-profile-invalid": "1.29,1.30,1.31,1.32,1.33,1.34,1.35,1.36,1.37",
	}
	got := map[string]string{}
	for _, d := range ds {
		got[d.ID] = strings.Join(d.Minors, ",")
		if d.Source == "" {
			t.Errorf("%s: deviation without a source", d.ID)
		}
	}
	for id, minors := range want {
		if got[id] != minors {
			t.Errorf("deviation %s at %q, want %q", id, got[id], minors)
		}
	}
	if _, ok := got["apparmor/create/field-to-annotation"]; ok {
		t.Error("Phase 2 shipped on time; field-to-annotation must not deviate")
	}
}

// TestSeccompDeviations: the seccomp sources of v1.19 … v1.28 show where
// upstream left the KEP's plan (which ends annotation support in v1.23).
func TestSeccompDeviations(t *testing.T) {
	want := map[string]string{
		"seccomp/create/field-to-annotation": "1.23,1.24",
		"seccomp/create/annotation-to-field": "1.23,1.24,1.25,1.26",
		"seccomp/template/instantiation":     "1.23,1.24,1.25,1.26",
		"seccomp/kubelet/precedence":         "1.23,1.24,1.25,1.26",
		"seccomp/create/warning":             "1.19,1.20,1.21,1.22,1.23,1.24,1.25,1.26",
		"seccomp/template/no-sync":           "1.21",
		"seccomp/update/annotation-ignored":  "1.19",
	}
	got := map[string][]string{}
	for _, d := range Deviations(release.Minor{Major: 1, Minor: 10}, release.Minor{Major: 1, Minor: 45}) {
		if strings.HasPrefix(d.ID, "seccomp/") {
			got[d.ID] = append(got[d.ID], d.Minors...)
		}
	}
	for id, minors := range want {
		if g := strings.Join(got[id], ","); g != minors {
			t.Errorf("deviation %s at %q, want %q", id, g, minors)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("unexpected seccomp deviation %s at %v", id, got[id])
		}
	}
}

func TestSatisfies(t *testing.T) {
	kep := Observation{Summary: "k", Admission: Accepted, WarningContains: []string{"seccomp.security.alpha.kubernetes.io/pod"}}
	up := Observation{Summary: "u", Admission: Accepted, Warnings: []string{SeccompAnnotationWarning("", SeccompPodAnnotation)}}
	if !Satisfies(up, kep) {
		t.Errorf("an exact warning naming the annotation must satisfy a KEP that requires a warning naming it")
	}
	if Satisfies(Observation{Admission: Accepted}, kep) {
		t.Errorf("no warning must not satisfy a KEP that requires one")
	}
	if Satisfies(Observation{Admission: Rejected, Warnings: up.Warnings}, kep) {
		t.Errorf("a different admission must not satisfy the KEP")
	}
	if Satisfies(Observation{Admission: Accepted}, Observation{Admission: Accepted, NoWarnings: true}) {
		t.Errorf("dropping NoWarnings must be a deviation")
	}
}

// KEP-135 §Pod Creation and §PodTemplates ask for a warning and leave its
// mechanism and text open: upstream's exact warnings meet that plan, so
// simulate reports no deviation, as the suite's verdict (pass) does.
func TestSeccompWarningIsNoDeviation(t *testing.T) {
	for _, id := range []string{"seccomp/create/warning", "seccomp/template/no-sync"} {
		e, err := Expect(id, release.MustParseVersion("1.37.2"), release.MustParseVersion("1.37.2"), DefaultHost)
		if err != nil {
			t.Fatal(err)
		}
		if e.Deviation || len(e.KEPPlanned.WarningContains) == 0 {
			t.Errorf("%s at 1.37.2: deviation %v, KEP plan %+v", id, e.Deviation, e.KEPPlanned)
		}
	}
}
