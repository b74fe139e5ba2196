package seccomp

import (
	"testing"

	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// TestDryRunListsTheCatalogue checks that the compiled suite lists exactly
// the catalogue's seccomp/* ids (API rules once, kubelet rules per worker).
func TestDryRunListsTheCatalogue(t *testing.T) {
	h.CheckDryRunListsTheCatalogue(t, "seccomp", "TestSeccomp")
}

// TestProgressLinePerSpec checks that one spec run gives exactly one
// progress line, with its catalogue id, as the runner expects.
func TestProgressLinePerSpec(t *testing.T) {
	h.CheckProgressLinePerSpec(t, "TestSeccomp", "seccomp/api/types")
}
