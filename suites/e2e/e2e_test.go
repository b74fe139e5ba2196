// Package e2e is the test main of skewproof's conformance suites, laid out
// like the Kubernetes e2e tests: the specs live in ordinary packages
// (suites/seccomp, suites/apparmor, suites/profiles) that register
// themselves when imported here, and 'make build' compiles this package
// once into bin/skewproof-e2e.test, which 'skewproof run' and the
// conformance image run.
//
//	go test -c -o bin/skewproof-e2e.test ./suites/e2e
//	SKEWPROOF_PLAN=… bin/skewproof-e2e.test -test.run '^TestE2E$' -ginkgo.label-filter seccomp -ginkgo.v
//
// The runner hands it the run plan (SKEWPROOF_PLAN, package suites/env);
// by hand SKEWPROOF_KUBECONFIG will do. Without either (and without a
// made-up cluster in SKEWPROOF_NODES) the binary skips: 'go test ./...'
// needs no cluster.
package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	_ "github.com/skewproof/skewproof/suites/apparmor"
	senv "github.com/skewproof/skewproof/suites/env"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	_ "github.com/skewproof/skewproof/suites/profiles"
	_ "github.com/skewproof/skewproof/suites/seccomp"
)

// TestE2E runs every registered suite's specs that the Ginkgo filters select.
func TestE2E(t *testing.T) { h.RunE2E(t) }

// The binary declares what each suite needs, as the runner asks it
// (senv.Declare): the runner installs the fixtures and grants the API
// permissions from this and knows no suite by name. The declarations are
// kept in testdata/declarations.json, which the runner's tests read (the
// ClusterRole of docs/rbac.md); SKEWPROOF_UPDATE_DOCS=1 rewrites it.
func TestBinaryDeclaresTheSuitesNeeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "suites.json")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestE2E$")
	cmd.Env = append(os.Environ(), senv.Declare+"="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, err := senv.ReadSuites(path)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := map[string][]string{}
	for _, d := range got {
		fixtures[d.Family] = d.Fixtures
		if len(d.Permissions) == 0 {
			t.Errorf("suite %s declares no API permission", d.Family)
		}
	}
	want := map[string][]string{
		"apparmor": {senv.FixtureSeccompProfiles, senv.FixtureAppArmorProfiles, senv.FixtureRuntimeClasses},
		"profiles": nil,
		"seccomp":  {senv.FixtureSeccompProfiles, senv.FixtureRuntimeClasses},
	}
	if !reflect.DeepEqual(fixtures, want) {
		t.Errorf("declared fixtures %+v, want %+v", fixtures, want)
	}
	const golden = "testdata/declarations.json"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := os.ReadFile(golden); !bytes.Equal(old, b) {
		if os.Getenv("SKEWPROOF_UPDATE_DOCS") != "" {
			if err := os.WriteFile(golden, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s is not what the binary declares; SKEWPROOF_UPDATE_DOCS=1 go test ./suites/e2e -run TestBinaryDeclaresTheSuitesNeeds rewrites it", golden)
	}
}
