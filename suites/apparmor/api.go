package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

var (
	profile = names.AppArmorLocalhostProfile
	ctrAnn  = skew.AppArmorAnnotation(names.ContainerName)
)

// KEP-24 §Proposal › API, › Validation; failure rows 4 and 7.
var _ = Describe("[apparmor] API validation", Label("apparmor", "api"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/api/types", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "pod RuntimeDefault + container Localhost", Obs: t.Create(ctx, fx.Pod("types", fx.Unschedulable(),
				fx.PodAppArmor(fx.AppArmor(runtimeDefault, nil)), fx.ContainerAppArmor(fx.LocalhostAppArmor(profile))))},
			h.Sub{Name: "pod Unconfined", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("pod-unconfined", fx.Unschedulable(),
				fx.PodAppArmor(fx.AppArmor(unconfined, nil))))},
			h.Sub{Name: "container Unconfined", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-unconfined", fx.Unschedulable(),
				fx.ContainerAppArmor(fx.AppArmor(unconfined, nil))))},
			h.Sub{Name: "pod Localhost", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("pod-localhost", fx.Unschedulable(),
				fx.PodAppArmor(fx.LocalhostAppArmor(profile))))},
			h.Sub{Name: "container RuntimeDefault", Want: h.Generic, Obs: t.Create(ctx, fx.Pod("ctr-runtimedefault", fx.Unschedulable(),
				fx.ContainerAppArmor(fx.AppArmor(runtimeDefault, nil))))},
		)
	})

	h.APIRule("apparmor/api/annotation-values", func(ctx context.Context, t *h.Scenario) {
		subs := []h.Sub{
			{Name: "annotation no-such-form/x", Obs: t.Create(ctx, fx.Pod("invalid", fx.Unschedulable(), fx.Annotation(ctrAnn, "no-such-form/x")))},
			{Name: "annotation docker-default", Want: h.Fragment(0), Obs: t.Create(ctx, fx.Pod("bare-name", fx.Unschedulable(), fx.Annotation(ctrAnn, "docker-default")))},
		}
		// The four valid forms (KEP-24 §Proposal › Validation).
		for name, v := range map[string]string{"localhost": "localhost/" + profile, "empty": "", "runtime-default": "runtime/default", "unconfined": "unconfined"} {
			subs = append(subs, h.Sub{Name: "annotation " + quote(v), Want: h.AdmittedInstead,
				Obs: t.Create(ctx, fx.Pod("valid-"+name, fx.Unschedulable(), fx.Annotation(ctrAnn, v)))})
		}
		t.Judge(subs...)
	})

	runtimeProfileInvalid := func(ctx context.Context, t *h.Scenario) {
		t.Judge(h.Sub{Name: "container annotation runtime/default-audit", Obs: t.Create(ctx, fx.Pod("audit", fx.Unschedulable(),
			fx.Annotation(ctrAnn, "runtime/default-audit")))})
	}
	h.APIRule("apparmor/api/runtime-profile-invalid", runtimeProfileInvalid)
	h.APIRule("apparmor/failure/row-4", runtimeProfileInvalid)

	localhostInvalid := func(ctx context.Context, t *h.Scenario) {
		empty, padded := "", " "+profile+" "
		t.Judge(
			h.Sub{Name: "container Localhost without localhostProfile", Want: h.Fragment(0), Obs: t.Create(ctx, fx.Pod("missing", fx.Unschedulable(),
				fx.ContainerAppArmor(fx.AppArmor(localhost, nil))))},
			h.Sub{Name: "pod Localhost with a whitespace-padded name", Want: h.Fragment(1), Obs: t.Create(ctx, fx.Pod("padded", fx.Unschedulable(),
				fx.PodAppArmor(fx.AppArmor(localhost, &padded))))},
			h.Sub{Name: "container Localhost with an empty name", Want: h.Fragment(0), Obs: t.Create(ctx, fx.Pod("empty", fx.Unschedulable(),
				fx.ContainerAppArmor(fx.AppArmor(localhost, &empty))))},
		)
	}
	h.APIRule("apparmor/api/localhost-invalid", localhostInvalid)
	h.APIRule("apparmor/failure/row-7", localhostInvalid)

	h.APIRule("apparmor/api/windows", func(ctx context.Context, t *h.Scenario) {
		t.Judge(
			h.Sub{Name: "windows pod with a container field", Want: h.AdmissionOnly, Obs: t.Create(ctx, fx.Pod("windows-field", fx.Unschedulable(), fx.Windows(),
				fx.ContainerAppArmor(fx.AppArmor(runtimeDefault, nil))))},
			h.Sub{Name: "windows pod with a container annotation", Want: windowsAnnotation, Obs: t.Create(ctx, fx.Pod("windows-annotation", fx.Unschedulable(), fx.Windows(),
				fx.Annotation(ctrAnn, "runtime/default")))},
		)
	})
})

// windowsAnnotation: the annotation case of apparmor/api/windows is stored
// (only the field is forbidden), without a field.
func windowsAnnotation(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: skew.Accepted, AbsentFields: o.AbsentFields}
}

func quote(v string) string { return `"` + v + `"` }
