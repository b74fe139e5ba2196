package main

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func TestRBAC(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"rbac", "--namespace", "conformance", "--service-account", "vendor-runner"}); code != 0 {
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
	if code := run([]string{"rbac"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"namespace: default", "name: skewproof-runner", "kind: ClusterRole\n", "kind: ClusterRoleBinding"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
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
