package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles/agent"
	senv "github.com/skewproof/skewproof/suites/env"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// declaringBinary is a suite binary that declares what the real one does
// (suites/e2e/testdata/declarations.json, kept equal to it by a test).
func declaringBinary(t *testing.T) string {
	t.Helper()
	decls, err := filepath.Abs("../../suites/e2e/testdata/declarations.json")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "skewproof-e2e.test")
	script := "#!/bin/sh\ncp " + decls + " \"$" + senv.Declare + "\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestRBAC(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"rbac", "--namespace", "conformance", "--service-account", "vendor-runner", "--suite-binary", declaringBinary(t)}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("want 3 YAML documents, got %d:\n%s", len(docs), out.String())
	}
	var crb rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(docs[2]), &crb); err != nil {
		t.Fatal(err)
	}
	if len(crb.Subjects) != 1 || crb.Subjects[0].Namespace != "conformance" || crb.Subjects[0].Name != "vendor-runner" {
		t.Errorf("binding subjects = %+v", crb.Subjects)
	}
	if !strings.Contains(docs[0], "kind: ServiceAccount") || !strings.Contains(docs[0], "name: vendor-runner") {
		t.Errorf("first document is not the ServiceAccount:\n%s", docs[0])
	}
}

func TestRBACDefaults(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"rbac", "--suite-binary", declaringBinary(t)}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"namespace: default", "name: skewproof-runner", "kind: ClusterRole\n", "kind: ClusterRoleBinding"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// --suites narrows the role to those suites' permissions; a suite the
// binary does not have is a usage error that names those it has.
func TestRBACOfSomeSuites(t *testing.T) {
	out := withServedCache(t)
	bin := declaringBinary(t)
	if code := run([]string{"rbac", "--suite-binary", bin}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	all := out.String()
	out.Reset()
	if code := run([]string{"rbac", "--suite-binary", bin, "--suites", "seccomp"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	seccomp := out.String()
	for _, only := range []string{"nodes/proxy", "/metrics", "serviceaccounts/token", "skewproof-profiles-e2e"} {
		if !strings.Contains(all, only) || strings.Contains(seccomp, only) {
			t.Errorf("%q: in all suites' role %v, in seccomp's %v", only, strings.Contains(all, only), strings.Contains(seccomp, only))
		}
	}
	for _, both := range []string{"pods/ephemeralcontainers", "runtimeclasses", "skewproof-fixtures"} {
		if !strings.Contains(seccomp, both) {
			t.Errorf("seccomp's role lacks %q", both)
		}
	}
	if code, _, stderr := runCaptured(t, "rbac", "--suite-binary", bin, "--suites", "seccomp,nope"); code != 2 || !strings.Contains(stderr, `no suite "nope" (it has: apparmor, profiles, seccomp)`) {
		t.Errorf("an unknown suite: exit %d, %s", code, stderr)
	}
}

func TestRBACBadInput(t *testing.T) {
	withServedCache(t)
	for _, args := range [][]string{
		{"rbac", "--namespace", "Not_A_Namespace"},
		{"rbac", "--service-account", ""},
		{"rbac", "extra"},
		{"rbac", "--verbs", "*"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// --profiles-namespace adds what 'skewproof profiles' does in that
// namespace: the agent applied and removed there by name, and the profiles
// installed.
func TestRBACProfilesNamespace(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"rbac", "--suite-binary", declaringBinary(t), "--suites", "seccomp", "--profiles-namespace", "my-profiles"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	docs := strings.Split(out.String(), "\n---\n")
	var cr rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &cr); err != nil {
		t.Fatal(err)
	}
	objs, err := agent.Objects(agent.DeployOptions{Namespace: "my-profiles", Image: "unused", OwnNodePolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		for _, verb := range []string{"create", "patch"} {
			if !rbac.Allows(cr.Rules, verb, o.Resource.Group, o.Resource.Resource, o.Object.GetName()) {
				t.Errorf("%s %s/%s: no %s", o.Resource.Resource, o.Object.GetNamespace(), o.Object.GetName(), verb)
			}
		}
	}
	if !rbac.Allows(cr.Rules, "create", "profiles.skewproof.io", "seccompprofiles", "") {
		t.Error("installing a profile is not granted")
	}
	if code, _, stderr := runCaptured(t, "rbac", "--suite-binary", declaringBinary(t), "--profiles-namespace", "Bad_NS"); code != 2 || !strings.Contains(stderr, `--profiles-namespace "Bad_NS" is no namespace name`) {
		t.Errorf("a bad namespace: exit %d, %s", code, stderr)
	}
}
