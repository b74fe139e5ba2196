package apparmor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew/release"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// Before v1.30 a profile is set by annotation: an API server of that time
// drops the field as unknown, and the v1.29 leg of the history preset once
// judged four rules on pods that had no profile at all.
func TestContainerProfileUsesTheAPIOfTheAPIServer(t *testing.T) {
	saved := h.Env.APIServer
	defer func() { h.Env.APIServer = saved }()
	for _, c := range []struct {
		apiserver, what string
		field           bool
	}{
		{"1.29.15", "container annotation localhost/" + profile, false},
		{"1.30.14", "container field Localhost", true},
		{"1.37.2", "container field Localhost", true},
	} {
		h.Env.APIServer = release.MustParseVersion(c.apiserver)
		set, what := containerProfile(&h.Scenario{}, fx.LocalhostAppArmor(profile))
		pod := fx.Pod("p", set)
		sc := pod.Spec.Containers[0].SecurityContext
		hasField := sc != nil && sc.AppArmorProfile != nil
		ann, hasAnn := pod.Annotations[ctrAnn]
		if what != c.what || hasField != c.field || hasAnn == c.field {
			t.Errorf("at %s: %q, field %v, annotation %q (%v); want %q, field %v", c.apiserver, what, hasField, ann, hasAnn, c.what, c.field)
		}
	}
	for p, want := range map[*corev1.AppArmorProfile]string{
		fx.AppArmor(unconfined, nil):     "unconfined",
		fx.AppArmor(runtimeDefault, nil): "runtime/default",
		fx.LocalhostAppArmor(profile):    "localhost/" + profile,
	} {
		if got := annotationValue(p); got != want {
			t.Errorf("annotationValue(%s) = %q, want %q", p.Type, got, want)
		}
	}
}
