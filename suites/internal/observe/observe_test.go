package observe

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
)

func two() *int  { i := 2; return &i }
func zero() *int { i := 0; return &i }

func TestLookup(t *testing.T) {
	p := fixtures.Pod("p", fixtures.ContainerSeccomp(fixtures.Profile(corev1.SeccompProfileTypeLocalhost, "x.json")))
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := Lookup(u, skew.ContainerSeccompType); !ok || v != "Localhost" {
		t.Errorf("container type = %v, %v", v, ok)
	}
	if _, ok := Lookup(u, skew.PodSeccompType); ok {
		t.Errorf("pod type found on a pod without one")
	}
	if _, ok := Lookup(u, skew.EphemeralSeccompType); ok {
		t.Errorf("ephemeral type found on a pod without ephemeral containers")
	}
}

func TestMatchStoredObject(t *testing.T) {
	p := fixtures.Pod("p", fixtures.PodSeccomp(fixtures.Profile(corev1.SeccompProfileTypeRuntimeDefault, "")),
		fixtures.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
	u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	got := Observation{Admission: skew.Accepted, Object: u}
	want := skew.Observation{Admission: skew.Accepted,
		Annotations: map[string]string{skew.SeccompPodAnnotation: "runtime/default"},
		Fields:      map[string]string{skew.PodSeccompType: "RuntimeDefault"}, NoWarnings: true}
	if m := Match(want, got); len(m) != 0 {
		t.Errorf("unexpected mismatches %q", m)
	}
	want.AbsentAnnotations = []string{skew.SeccompPodAnnotation}
	want.AbsentFields = []string{skew.PodSeccompType}
	if m := Match(want, got); len(m) != 2 {
		t.Errorf("want 2 mismatches, got %q", m)
	}
	got.Warnings = []string{"metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional"}
	if m := Match(skew.Observation{NoWarnings: true}, got); len(m) != 1 {
		t.Errorf("a seccomp warning must break NoWarnings: %q", m)
	}
}

func TestMatchRejectionAndWarnings(t *testing.T) {
	got := Observation{Admission: skew.Rejected, Errors: []string{"a: must be a relative path", "b: must not contain '..'"}}
	want := skew.Observation{Admission: skew.Rejected, MessageContains: []string{"must be a relative path", "must not contain '..'"}}
	if m := Match(want, got); len(m) != 0 {
		t.Errorf("unexpected mismatches %q", m)
	}
	got.Errors = got.Errors[:1]
	if m := Match(want, got); len(m) != 1 || !strings.Contains(m[0], "..") {
		t.Errorf("missing fragment not reported: %q", m)
	}
	w := skew.SeccompAnnotationWarning("", skew.SeccompPodAnnotation)
	if m := Match(skew.Observation{Warnings: []string{w}}, Observation{Warnings: []string{w, "unrelated"}}); len(m) != 0 {
		t.Errorf("unrelated warnings must be ignored: %q", m)
	}
	if m := Match(skew.Observation{Warnings: []string{w}}, Observation{Warnings: []string{w, w + "x"}}); len(m) != 1 {
		t.Errorf("an extra seccomp warning must be reported: %q", m)
	}
}

func TestMatchContainer(t *testing.T) {
	want := skew.Observation{Container: &skew.ContainerOutcome{State: skew.Running, SeccompMode: two()}}
	if m := Match(want, Observation{Container: &Container{State: skew.Running, SeccompMode: two()}}); len(m) != 0 {
		t.Errorf("unexpected %q", m)
	}
	if m := Match(want, Observation{Container: &Container{State: skew.Running, SeccompMode: zero()}}); len(m) != 1 {
		t.Errorf("want a Seccomp mismatch, got %q", m)
	}
	anyOf := []skew.ContainerOutcome{
		{State: skew.Waiting, Reason: "CreateContainerError|RunContainerError"},
		{State: skew.Running, SeccompMode: zero()},
	}
	if i := WhichOf(anyOf, Container{State: skew.Waiting, Reason: "RunContainerError"}); i != 0 {
		t.Errorf("WhichOf = %d, want 0", i)
	}
	if i := WhichOf(anyOf, Container{State: skew.Running, SeccompMode: zero()}); i != 1 {
		t.Errorf("WhichOf = %d, want 1", i)
	}
	if i := WhichOf(anyOf, Container{State: skew.Waiting, Reason: "ImagePullBackOff"}); i != -1 {
		t.Errorf("WhichOf = %d, want -1", i)
	}
	if m := Match(skew.Observation{NotApplicable: "x"}, Observation{}); len(m) != 1 {
		t.Errorf("not applicable must never match")
	}
}

func TestForCase(t *testing.T) {
	zero, two := 0, 2
	o := skew.Observation{Summary: "s", Cases: []skew.ContainerOutcome{
		{Case: "execve", State: skew.Waiting, Reason: "CrashLoopBackOff"},
		{Case: "execve", State: skew.Terminated, Reason: "Error"},
		{Case: "Unconfined", State: skew.Running, SeccompMode: &zero},
		{Case: "RuntimeDefault", State: skew.Running, SeccompMode: &two},
	}}
	if w := ForCase("execve")(o); len(w.AnyOf) != 2 || w.Container != nil || w.Cases != nil {
		t.Errorf("ForCase(execve) = %+v", w)
	}
	w := ForCase("Unconfined")(o)
	if w.Container == nil || *w.Container.SeccompMode != 0 || len(w.AnyOf) != 0 {
		t.Errorf("ForCase(Unconfined) = %+v", w)
	}
	if m := Match(w, Observation{Container: &Container{State: skew.Running, SeccompMode: &two}}); len(m) == 0 {
		t.Error("Seccomp: 2 must not match the Unconfined case")
	}
	if m := Match(ForCase("execve")(o), Observation{Container: &Container{State: skew.Terminated, Reason: "Error"}}); len(m) != 0 {
		t.Errorf("a terminated execve container must match: %v", m)
	}
	if m := Match(ForCase("nope")(o), Observation{Container: &Container{State: skew.Running}}); len(m) == 0 {
		t.Error("a case the oracle does not name must match nothing")
	}
	if m := Match(o, Observation{Container: &Container{State: skew.Running, SeccompMode: &two}}); len(m) == 0 {
		t.Error("an expectation with cases must not match without a case selected")
	}
}

// A Seccomp mode or an AppArmor label proves only "some profile": where
// the outcome names an effect, a container whose effect was not probed,
// or was probed and not shown, does not match.
func TestMatchContainerEffect(t *testing.T) {
	want := skew.ContainerOutcome{State: skew.Running, SeccompMode: two(), Effect: skew.EffectSeccompDenyMkdir}
	got := Container{State: skew.Running, SeccompMode: two()}
	if m := MatchContainer(want, got); len(m) != 1 || !strings.Contains(m[0], "not probed") {
		t.Errorf("mode alone: want one 'not probed' mismatch, got %q", m)
	}
	got.Effects = []Effect{{Name: skew.EffectSeccompDenyMkdir, Detail: "mkdir: ok"}}
	if m := MatchContainer(want, got); len(m) != 1 || !strings.Contains(m[0], "not shown: mkdir: ok") {
		t.Errorf("an allow-all filter: want 'not shown', got %q", m)
	}
	got.Effects[0].Shown = true
	if m := MatchContainer(want, got); len(m) != 0 {
		t.Errorf("effect shown: unexpected %q", m)
	}
	// Not made: no mismatch here; the harness stops the spec.
	got.Effects[0] = Effect{Name: skew.EffectSeccompDenyMkdir, Unmade: "no control"}
	if m := MatchContainer(want, got); len(m) != 0 {
		t.Errorf("unmade: unexpected %q", m)
	}
	if r, _ := UnmadeEffects(&got); len(r) != 1 {
		t.Errorf("UnmadeEffects = %q", r)
	}
	if WithoutEffect(want).Effect != "" || want.Effect == "" {
		t.Error("WithoutEffect must copy")
	}
}

// On a runtime whose default AppArmor profile was not read, the marker
// stays: any profile in enforce mode but unconfined or skewproof's own.
func TestMatchRuntimeDefaultMarker(t *testing.T) {
	want := skew.ContainerOutcome{State: skew.Running, AppArmorProfile: skew.RuntimeDefaultMarker}
	for label, ok := range map[string]bool{
		"vendor-default (enforce)":       true,
		"unconfined":                     false,
		"":                               false,
		"vendor-default (complain)":      false,
		"skewproof-deny-write (enforce)": false,
	} {
		if m := MatchContainer(want, Container{State: skew.Running, AppArmorProfile: label}); (len(m) == 0) != ok {
			t.Errorf("label %q: mismatches %q, want match %v", label, m, ok)
		}
	}
}
