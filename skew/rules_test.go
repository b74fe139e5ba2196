package skew

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

func at(m release.Minor) string { return fmt.Sprintf("%d.%d.0", m.Major, m.Minor) }

// windowCase is one generated case: at version v the rule holds (or not)
// in the plan or upstream.
type windowCase struct {
	id, side, v string
	holds       bool
}

// readPart is the part of w whose sources were read for r: the oracle
// answers only there, so the window cases stay inside it. ok is false when
// no minor of w was read.
func readPart(r Rule, w release.Window) (first, last release.Minor, ok bool) {
	c := w.Intersect(r.Read.Window())
	last = release.Minor{Major: c.Until.Major, Minor: c.Until.Minor - 1}
	return c.From, last, !last.Less(c.From)
}

// windowCases builds, for every rule and for both its KEP and its upstream
// window, cases at the first and the last version where it holds, the first
// version where it no longer holds, and the last version before it holds,
// each within the releases read for the rule.
func windowCases() []windowCase {
	var out []windowCase
	for _, r := range Rules() {
		read := r.Read.Window()
		for _, side := range []string{"kep", "upstream"} {
			w := r.KEPWindow
			if side == "upstream" {
				w = r.UpstreamWindow
			}
			first, last, ok := readPart(r, w)
			if !ok {
				continue
			}
			out = append(out, windowCase{r.ID, side, at(first), true}, windowCase{r.ID, side, at(last), true})
			if !w.OpenEnd() && read.ContainsMinor(w.Until) {
				out = append(out, windowCase{r.ID, side, at(w.Until), false})
			}
			if before := (release.Minor{Major: w.From.Major, Minor: w.From.Minor - 1}); !w.OpenStart() && read.ContainsMinor(before) {
				out = append(out, windowCase{r.ID, side, at(before), false})
			}
		}
	}
	return out
}

func observationAt(t *testing.T, id, side, v string) Observation {
	t.Helper()
	ver := release.MustParseVersion(v)
	e, err := Expect(id, ver, ver, DefaultHost)
	if err != nil {
		t.Fatalf("Expect(%s, %s): %v", id, v, err)
	}
	if side == "kep" {
		return e.KEPPlanned
	}
	return e.Expected
}

// TestRuleWindows checks each rule's windows against its phases: the
// observation at the first version of a window is the one at its last
// version and differs at the first version after it and the last before.
func TestRuleWindows(t *testing.T) {
	for _, c := range windowCases() {
		t.Run(fmt.Sprintf("%s/%s@%s", c.id, c.side, c.v), func(t *testing.T) {
			r, _ := RuleByID(c.id)
			w := r.KEPWindow
			if c.side == "upstream" {
				w = r.UpstreamWindow
			}
			first, _, _ := readPart(r, w)
			holding := observationAt(t, c.id, c.side, at(first))
			if holding.NotApplicable != "" {
				t.Fatalf("rule does not apply at the first version of its window: %s", holding.NotApplicable)
			}
			got := observationAt(t, c.id, c.side, c.v)
			if same := sameObservation(holding, got); same != c.holds {
				t.Errorf("at v%s holds=%v, want %v (window %s)\n  holding: %s\n  got:     %s", c.v, same, c.holds, w, describe(holding), describe(got))
			}
		})
	}
}

// TestResearchedFacts pins what was read in the upstream sources, one case
// per finding, at the versions where it changes.
func TestResearchedFacts(t *testing.T) {
	cases := []struct {
		id, apiserver, kubelet string
		host                   HostFacts
		check                  func(e Expectation) error
	}{
		// AppArmor Phase 2 shipped in v1.34: fields no longer copied to annotations.
		{"apparmor/create/field-to-annotation", "1.33.13", "1.33.13", DefaultHost, annotation(aaAnnKey, aaLocalhostAnn)},
		{"apparmor/create/field-to-annotation", "1.34.4", "1.34.4", DefaultHost, noAnnotation(aaAnnKey)},
		{"apparmor/create/field-to-annotation", "1.30.14", "1.30.14", DefaultHost, deviation(false)},
		{"apparmor/create/field-to-annotation", "1.29.6", "1.29.6", DefaultHost, notApplicable()},
		// AppArmor Phase 3 has not shipped: annotations still become fields.
		{"apparmor/create/annotation-to-field", "1.35.4", "1.35.4", DefaultHost, deviation(false)},
		{"apparmor/create/annotation-to-field", "1.36.3", "1.36.3", DefaultHost, all(deviation(true), field(ContainerAppArmorType, "Localhost"), kepAbsentField(ContainerAppArmorType))},
		{"apparmor/create/annotation-to-field", "1.37.2", "1.34.4", DefaultHost, deviation(true)},
		{"apparmor/static-pod/annotation-copy", "1.37.2", "1.35.4", DefaultHost, deviation(false)},
		{"apparmor/static-pod/annotation-copy", "1.37.2", "1.36.3", DefaultHost, all(deviation(true), appArmorProfile(aaEnforcedLocal))},
		// Without AppArmor the kubelet's answer to the annotation shows it is
		// honoured (isRequired counts it): blocked up to v1.30, rejected from
		// v1.31; in the KEP's Phase 3 the annotation would be ignored.
		{"apparmor/static-pod/annotation-copy", "1.37.2", "1.36.3", HostFacts{Seccomp: true}, all(skip(""), deviation(true), state(RejectedByKubelet))},
		{"apparmor/static-pod/annotation-copy", "1.33.13", "1.30.14", HostFacts{Seccomp: true}, all(skip(""), deviation(false), state(Blocked))},
		// "" requires AppArmor (isRequired): row 5 on a host without it.
		{"apparmor/create/empty-annotation", "1.33.13", "1.30.14", HostFacts{Seccomp: true}, all(skip(""), deviation(false), state(Blocked))},
		{"apparmor/create/empty-annotation", "1.37.2", "1.37.2", HostFacts{Seccomp: true}, all(skip(""), deviation(true), state(RejectedByKubelet))},
		{"apparmor/create/empty-annotation", "1.37.2", "1.37.2", DefaultHost, all(deviation(false), appArmorProfile("cri-containerd.apparmor.d (enforce)"))},
		// Row 5: soft admission (blocked) up to v1.30, hard admission from v1.31.
		{"apparmor/failure/row-5", "1.30.14", "1.30.14", HostFacts{Seccomp: true}, all(deviation(false), state(Blocked))},
		{"apparmor/failure/row-5", "1.34.4", "1.31.14", HostFacts{Seccomp: true}, all(deviation(true), state(RejectedByKubelet), skip(""))},
		{"apparmor/failure/row-5", "1.34.4", "1.31.14", DefaultHost, skip("needs a host without AppArmor")},
		// Row 4 message differs from the KEP in every release.
		{"apparmor/api/runtime-profile-invalid", "1.29.6", "1.29.6", DefaultHost, all(deviation(true), message(`invalid AppArmor profile name: "runtime/default-audit"`))},
		{"apparmor/failure/row-4", "1.37.2", "1.37.2", DefaultHost, deviation(true)},
		{"seccomp/api/runtime-profile-invalid", "1.37.2", "1.37.2", DefaultHost, all(deviation(false), message("must be a valid seccomp profile"))},
		// Warnings, exact text.
		{"seccomp/create/warning", "1.29.6", "1.29.6", DefaultHost, warning(`metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`)},
		{"seccomp/template/no-sync", "1.37.2", "1.37.2", DefaultHost, warning(`spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`)},
		{"apparmor/create/warning", "1.30.14", "1.30.14", DefaultHost, all(deviation(false), warning(`metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead`))},
		{"apparmor/create/warning", "1.29.6", "1.29.6", DefaultHost, noWarnings()},
		// pkg/api/pod/warnings.go: v1.33.13 warns only when neither the
		// container nor the pod has a field (as the KEP's Phase 1 plans);
		// v1.34.4 only when the annotation differs from the pod-level profile
		// (the KEP's Phase 2 would warn: the container has no field).
		{"apparmor/template/no-sync", "1.33.13", "1.33.13", DefaultHost, all(deviation(false), noWarnings())},
		{"apparmor/template/no-sync", "1.34.4", "1.34.4", DefaultHost, all(deviation(true), noWarnings())},
		// Seccomp sync (pkg/registry/core/pod/strategy.go,
		// applySeccompVersionSkew): field to annotation to v1.24,
		// annotation to field to v1.26; the plan ends both in v1.23.
		{"seccomp/create/field-to-annotation", "1.22.17", "1.22.17", DefaultHost, all(deviation(false), annotation(seccompPodAnnKey, "runtime/default"))},
		{"seccomp/create/field-to-annotation", "1.24.17", "1.24.17", DefaultHost, all(deviation(true), annotation(seccompPodAnnKey, "runtime/default"))},
		{"seccomp/create/field-to-annotation", "1.25.16", "1.25.16", DefaultHost, all(deviation(false), noAnnotation(seccompPodAnnKey))},
		{"seccomp/create/field-to-annotation", "1.29.6", "1.29.6", DefaultHost, all(deviation(false), noAnnotation(seccompPodAnnKey))},
		{"seccomp/create/annotation-to-field", "1.26.15", "1.26.15", DefaultHost, all(deviation(true), field(PodSeccompType, "RuntimeDefault"))},
		{"seccomp/create/annotation-to-field", "1.27.16", "1.27.16", DefaultHost, all(deviation(false), absentField(PodSeccompType))},
		{"seccomp/template/instantiation", "1.26.15", "1.26.15", DefaultHost, all(deviation(true), field(PodSeccompType, "RuntimeDefault"))},
		// A pod's annotations never warn while they are copied to fields
		// (the warnings are computed after PrepareForCreate); no seccomp
		// warning exists before v1.22.
		{"seccomp/create/warning", "1.21.14", "1.21.14", DefaultHost, all(deviation(true), noWarnings())},
		{"seccomp/create/warning", "1.26.15", "1.26.15", DefaultHost, all(deviation(true), noWarnings())},
		{"seccomp/create/warning", "1.27.16", "1.27.16", DefaultHost, all(deviation(false), warning(SeccompAnnotationWarning("", seccompPodAnnKey)))},
		// Templates are not synced, so they warn from v1.22, with the text of each release.
		{"seccomp/template/no-sync", "1.20.15", "1.20.15", DefaultHost, all(deviation(false), notApplicable())},
		{"seccomp/template/no-sync", "1.21.14", "1.21.14", DefaultHost, all(deviation(true), noWarnings())},
		{"seccomp/template/no-sync", "1.22.17", "1.22.17", DefaultHost, all(deviation(false), warning(`spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: deprecated since v1.19; use the "seccompProfile" field instead`))},
		{"seccomp/template/no-sync", "1.24.17", "1.24.17", DefaultHost, all(deviation(false), warning(`spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: deprecated since v1.19, non-functional in v1.25+; use the "seccompProfile" field instead`))},
		{"seccomp/template/no-sync", "1.26.15", "1.26.15", DefaultHost, all(deviation(false), warning(`spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: deprecated since v1.19, non-functional in a future release; use the "seccompProfile" field instead`))},
		// Precedence: the API server copies the container annotation into
		// the container field to v1.26, whatever the kubelet; from v1.27
		// every kubelet (v1.20 on, on containerd) applies the fields only.
		{"seccomp/kubelet/precedence", "1.37.2", "1.34.4", DefaultHost, all(deviation(false), seccompMode(2))},
		{"seccomp/kubelet/precedence", "1.29.6", "1.26.15", DefaultHost, all(deviation(false), seccompMode(2))},
		{"seccomp/kubelet/precedence", "1.27.16", "1.25.16", DefaultHost, all(deviation(false), seccompMode(2))},
		{"seccomp/kubelet/precedence", "1.26.15", "1.24.17", DefaultHost, all(deviation(true), seccompMode(0))},
		{"seccomp/kubelet/precedence", "1.21.14", "1.19.16", DefaultHost, all(deviation(false), seccompMode(0))},
		// Only kubelet v1.19 (CRI SeccompProfilePath only) honours an
		// annotation update on restart.
		{"seccomp/update/annotation-ignored", "1.21.14", "1.19.16", DefaultHost, all(deviation(true), seccompMode(0))},
		{"seccomp/update/annotation-ignored", "1.21.14", "1.20.15", DefaultHost, all(deviation(false), seccompMode(2))},
		// Ephemeral containers are off by default before v1.23.
		{"seccomp/ephemeral/inherit", "1.22.17", "1.22.17", DefaultHost, all(deviation(false), notApplicable())},
		{"seccomp/ephemeral/inherit", "1.24.17", "1.23.17", DefaultHost, all(deviation(false), seccompMode(2))},
		{"seccomp/ephemeral/no-annotation-sync", "1.22.17", "1.20.15", DefaultHost, all(deviation(false), notApplicable())},
		// Row 3 was read in containerd and runc only.
		// CRI-O was read too (rules_runtimes.go): no longer restricted to containerd.
		{"seccomp/failure/row-3", "1.37.2", "1.37.2", HostFacts{Seccomp: true, Runtime: "cri-o"}, all(skip(""), deviation(false), state(Waiting))},
		{"seccomp/failure/row-3", "1.37.2", "1.37.2", DefaultHost, all(skip(""), deviation(false), state(Waiting))},
		// Feature gate can be disabled up to v1.30 only.
		{"apparmor/feature-gate", "1.30.14", "1.30.14", DefaultHost, deviation(false)},
		{"apparmor/feature-gate", "1.31.14", "1.31.14", DefaultHost, all(deviation(true), notApplicable())},
		// The Ready message lost its AppArmor suffix in v1.30.
		{"apparmor/node/ready-message", "1.32.13", "1.29.6", HostFacts{Seccomp: true}, func(e Expectation) error {
			if e.Expected.ReadyMessageExcludes != "AppArmor" || e.Deviation {
				return fmt.Errorf("kubelet 1.29 without AppArmor on the host: %s", describe(e.Expected))
			}
			return nil
		}},
		{"apparmor/node/ready-message", "1.32.13", "1.29.6", DefaultHost, func(e Expectation) error {
			if !strings.Contains(e.Expected.Summary, "AppArmor enabled") {
				return fmt.Errorf("kubelet 1.29 should append AppArmor enabled: %s", e.Expected.Summary)
			}
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s@%s/%s", c.id, c.apiserver, c.kubelet), func(t *testing.T) {
			e, err := Expect(c.id, release.MustParseVersion(c.apiserver), release.MustParseVersion(c.kubelet), c.host)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.check(e); err != nil {
				t.Error(err)
			}
		})
	}
}

type check = func(Expectation) error

func all(cs ...check) check {
	return func(e Expectation) error {
		for _, c := range cs {
			if err := c(e); err != nil {
				return err
			}
		}
		return nil
	}
}

func deviation(want bool) check {
	return func(e Expectation) error {
		if e.Deviation != want {
			return fmt.Errorf("deviation = %v, want %v (%s)", e.Deviation, want, e.Reason)
		}
		if want && !strings.Contains(e.Reason, "source:") {
			return fmt.Errorf("deviation reason lacks a source citation: %s", e.Reason)
		}
		return nil
	}
}

func annotation(k, v string) check {
	return hasEntry("annotation", func(o Observation) map[string]string { return o.Annotations }, k, v)
}

func noAnnotation(k string) check {
	return listsAbsent(expectedObs, func(o Observation) []string { return o.AbsentAnnotations }, k, "annotation "+k+" not expected absent")
}

func field(k, v string) check {
	return hasEntry("field", func(o Observation) map[string]string { return o.Fields }, k, v)
}

func absentField(k string) check {
	return listsAbsent(expectedObs, absentFields, k, "field "+k+" not expected unset")
}

func kepAbsentField(k string) check {
	return listsAbsent(func(e Expectation) Observation { return e.KEPPlanned }, absentFields, k, "KEP plan should leave "+k+" unset")
}

func expectedObs(e Expectation) Observation { return e.Expected }
func absentFields(o Observation) []string   { return o.AbsentFields }

// hasEntry checks that the expected observation's annotations or fields
// (what, picked by m) hold k = v.
func hasEntry(what string, m func(Observation) map[string]string, k, v string) check {
	return func(e Expectation) error {
		if got := m(e.Expected)[k]; got != v {
			return fmt.Errorf("%s %s = %q, want %q", what, k, got, v)
		}
		return nil
	}
}

// listsAbsent checks that an observation of the expectation (the expected
// one, the KEP's plan) names k among what it expects absent; fail says
// what is wrong if not.
func listsAbsent(o func(Expectation) Observation, absent func(Observation) []string, k, fail string) check {
	return func(e Expectation) error {
		if !slices.Contains(absent(o(e)), k) {
			return fmt.Errorf("%s: %s", fail, describe(o(e)))
		}
		return nil
	}
}

func warning(w string) check {
	return func(e Expectation) error {
		if !slices.Contains(e.Expected.Warnings, w) {
			return fmt.Errorf("warning %q not expected; warnings: %q", w, e.Expected.Warnings)
		}
		return nil
	}
}

func noWarnings() check {
	return func(e Expectation) error {
		if !e.Expected.NoWarnings || len(e.Expected.Warnings) > 0 {
			return fmt.Errorf("want no warning: %s", describe(e.Expected))
		}
		return nil
	}
}

func message(frag string) check {
	return func(e Expectation) error {
		for _, m := range e.Expected.MessageContains {
			if strings.Contains(m, frag) {
				return nil
			}
		}
		return fmt.Errorf("message fragment %q not expected: %q", frag, e.Expected.MessageContains)
	}
}

func state(s ContainerState) check {
	return func(e Expectation) error {
		if e.Expected.Container == nil || e.Expected.Container.State != s {
			return fmt.Errorf("container state: %s, want %s", describe(e.Expected), s)
		}
		return nil
	}
}

func appArmorProfile(p string) check {
	return func(e Expectation) error {
		if e.Expected.Container == nil || e.Expected.Container.AppArmorProfile != p {
			return fmt.Errorf("AppArmor profile: %s, want %s", describe(e.Expected), p)
		}
		return nil
	}
}

func seccompMode(m int) check {
	return func(e Expectation) error {
		c := e.Expected.Container
		if c == nil || c.SeccompMode == nil || *c.SeccompMode != m {
			return fmt.Errorf("seccomp mode: %s, want %d", describe(e.Expected), m)
		}
		return nil
	}
}

func skip(frag string) check {
	return func(e Expectation) error {
		if frag == "" && e.Skip != "" {
			return fmt.Errorf("unexpected skip %q", e.Skip)
		}
		if frag != "" && !strings.Contains(e.Skip, frag) {
			return fmt.Errorf("skip = %q, want %q", e.Skip, frag)
		}
		return nil
	}
}

func notApplicable() check {
	return func(e Expectation) error {
		if e.Expected.NotApplicable == "" {
			return fmt.Errorf("want not applicable: %s", describe(e.Expected))
		}
		return nil
	}
}

// describe shows an observation in a failure message (reports.Describe
// renders it for people; this package cannot import reports).
func describe(o Observation) string {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Sprintf("%+v", o)
	}
	return string(b)
}

// TestRuntimeRowsCiteTheRuntime: failure row 3 is decided by the runtime;
// its source names the containerd and runc files and functions read, with
// their versions, not only "runtime dependent".
func TestRuntimeRowsCiteTheRuntime(t *testing.T) {
	r, _ := RuleByID("seccomp/failure/row-3")
	for _, w := range []string{"containerd v1.7.24", "generateSeccompSpecOpts", "contrib/seccomp/seccomp.go WithProfile",
		"runc v1.1.15", "libcontainer/seccomp/config.go ConvertStringToAction", "SetupSeccomp"} {
		if !strings.Contains(r.Source, w) {
			t.Errorf("seccomp/failure/row-3 source lacks %q: %s", w, r.Source)
		}
	}
	// The runtimes read are variants now, each citing its module@version.
	for _, rv := range r.Runtimes {
		want := map[string]string{Containerd: "containerd@v1.7.24", CRIO: "cri-o@v1.34.0"}[rv.Match.Runtime]
		if want == "" || !strings.Contains(rv.Source, want) {
			t.Errorf("seccomp/failure/row-3 variant %s: source %q lacks %q", rv.Match, rv.Source, want)
		}
	}
	if len(r.Runtimes) == 0 || len(r.Host.Runtimes) != 0 {
		t.Errorf("seccomp/failure/row-3: runtimes %v, host restriction %v; want variants and no restriction", r.Runtimes, r.Host.Runtimes)
	}
}
