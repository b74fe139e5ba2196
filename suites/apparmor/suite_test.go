package apparmor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	h "github.com/skewproof/skewproof/suites/internal/harness"
)

const (
	unconfined     = corev1.AppArmorProfileTypeUnconfined
	runtimeDefault = corev1.AppArmorProfileTypeRuntimeDefault
	localhost      = corev1.AppArmorProfileTypeLocalhost
)

// smoke is a quick subset (label "smoke"): field/annotation sync, the
// warning, and the kubelet's answer on a host without AppArmor.
var smoke = map[string]bool{
	"apparmor/api/types":          true,
	"apparmor/create/warning":     true,
	"apparmor/failure/row-5":      true,
	"apparmor/node/ready-message": true,
}

func TestAppArmor(t *testing.T) {
	h.Run(t, h.Suite{Family: "apparmor", Smoke: smoke})
}

var _ = h.SuiteNodes(nil)
