package runner

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// A kernel without AppArmor is a host fact (its AppArmor specs skip); a
// kernel with AppArmor whose agent did not load the fixtures is a failure
// of skewproof's set-up, never "host has no AppArmor".
func TestAppArmorSetUp(t *testing.T) {
	host := map[string]skew.HostFacts{"kind": {Seccomp: true}, "uml": {Seccomp: true, AppArmor: true}}
	if err := appArmorSetUp(host, map[string]bool{"kind": false, "uml": true}); err != nil {
		t.Errorf("no AppArmor on kind, loaded on uml: %v", err)
	}
	err := appArmorSetUp(host, map[string]bool{"kind": false, "uml": false})
	if err == nil || !strings.Contains(err.Error(), "skewproof's set-up failed: the kernel of node(s) [uml] has AppArmor") {
		t.Errorf("AppArmor kernel, fixtures not loaded: %v", err)
	}
}
