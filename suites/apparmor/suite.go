package apparmor

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

const (
	unconfined     = corev1.AppArmorProfileTypeUnconfined
	runtimeDefault = corev1.AppArmorProfileTypeRuntimeDefault
	localhost      = corev1.AppArmorProfileTypeLocalhost
)

// containerProfile sets the scenario container's profile p in the API the
// API server has: the container field from v1.30, the container
// annotation before (KEP-24: before the fields the annotations are the
// API; a field sent to such an API server is dropped as unknown, and the
// pod would run with no profile at all). It also names what it set.
func containerProfile(t *h.Scenario, p *corev1.AppArmorProfile) (fx.PodOption, string) {
	if t.AppArmorFields() {
		return fx.ContainerAppArmor(p), "container field " + string(p.Type)
	}
	v := annotationValue(p)
	return fx.Annotation(ctrAnn, v), "container annotation " + v
}

// annotationValue is the annotation that means what the field p means.
func annotationValue(p *corev1.AppArmorProfile) string {
	switch p.Type {
	case localhost:
		return "localhost/" + *p.LocalhostProfile
	case runtimeDefault:
		return "runtime/default"
	}
	return "unconfined"
}

// smoke is a quick subset (label "smoke"): field/annotation sync, the
// warning, and the kubelet's answer on a host without AppArmor.
var smoke = map[string]bool{
	"apparmor/api/types":          true,
	"apparmor/create/warning":     true,
	"apparmor/failure/row-5":      true,
	"apparmor/node/ready-message": true,
}

// family is the catalogue family of this suite and its first spec label.
const family = "apparmor"

func init() {
	// Before the first spec: the RuntimeClasses of failure row 1.
	// The fixture AppArmor profiles loaded on every AppArmor node, through
	// the agent that also reads the nodes' kernel facts, and failure row
	// 1's RuntimeClasses.
	h.Register(h.Suite{Family: family, Smoke: smoke, Precondition: gateDefault,
		Fixtures:    []string{senv.FixtureSeccompProfiles, senv.FixtureAppArmorProfiles, senv.FixtureRuntimeClasses},
		Permissions: permissions(),
		SetUp: func(ctx context.Context) (func(context.Context) error, error) {
			return h.EnsureRuntimeClasses(ctx, family)
		}})
}

// appArmorGate is, once per process, what the API server says about the
// AppArmor gate.
var appArmorGate = sync.OnceValue(func() gateState {
	return readGate(context.Background(), h.Env.Client, h.Env.APIServer, "AppArmor")
})

// gateDefault: every rule but apparmor/feature-gate assumes the AppArmor
// gate at its default (enabled); on a cluster with it disabled they skip,
// saying so. Where the gate can be disabled and the API server does not say
// whether it is, they are never judged on a guess (a cluster with the gate
// off would fail every rule): stopUnlessKnown.
func gateDefault(ctx context.Context, t *h.Scenario) {
	if t.ID == "apparmor/feature-gate" {
		return
	}
	if skew.CheckFeatureGate("AppArmor", false, h.Env.APIServer) != nil {
		return // locked to true or removed at this version: it is on
	}
	g := appArmorGate()
	g.stopUnlessKnown(t, "AppArmor")
	if g.enabled == "0" {
		t.Skip(fmt.Sprintf("the AppArmor feature gate is disabled on this API server v%s: the rule assumes it enabled (only apparmor/feature-gate applies)", h.Env.APIServer))
	}
}
