package env

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/skewproof/skewproof/internal/rbac"
)

// Declare names the file a suite binary writes its suites' declarations
// to (a JSON list of Suite) instead of running any spec: how the runner
// learns what each suite needs before it runs it, without a list of suites
// of its own.
const Declare = "SKEWPROOF_DECLARE"

// What the runner sets up on the cluster before a suite runs, as the suite
// declares it (Suite.Fixtures).
const (
	// FixtureSeccompProfiles: the fixture seccomp profiles installed on
	// every node through the runner's node agent, and each node's kernel
	// facts read from that agent (the plan's node facts).
	FixtureSeccompProfiles = "seccomp-profiles"
	// FixtureAppArmorProfiles: the fixture AppArmor profiles loaded on
	// every node whose kernel has AppArmor, through the same agent (it
	// implies FixtureSeccompProfiles).
	FixtureAppArmorProfiles = "apparmor-profiles"
	// FixtureRuntimeClasses: the RuntimeClasses of the node images'
	// restricted runtime handlers (failure row 1 of both KEPs), made once
	// by the runner before the suite processes start, so that no process
	// removes them under another (a suite run on its own makes them in
	// its SetUp, harness.EnsureRuntimeClasses).
	FixtureRuntimeClasses = "runtime-classes"
)

// Suite is a suite's declaration: its family (its specs' first label and
// the name --suites takes), the fixtures the runner sets up for it, and
// the API permissions its specs use, each with the reason (the runner's
// ClusterRole for a run against an existing cluster, 'skewproof rbac', is
// the runner's own and those of the suites it runs).
type Suite struct {
	Family      string      `json:"family"`
	Fixtures    []string    `json:"fixtures,omitempty"`
	Permissions []rbac.Rule `json:"permissions,omitempty"`
}

// Families are the families of the suites declared, in their order.
func Families(suites []Suite) []string {
	var out []string
	for _, d := range suites {
		out = append(out, d.Family)
	}
	return out
}

// WriteSuites writes declarations to path (the binary's side).
func WriteSuites(path string, suites []Suite) error {
	b, err := json.MarshalIndent(suites, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// ReadSuites reads the declarations a binary wrote (the runner's side).
func ReadSuites(path string) ([]Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Suite
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("the suites' declarations %s: %w", path, err)
	}
	return out, nil
}
