package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
)

func TestFeatureGatesFlag(t *testing.T) {
	f := featureGatesFlag{}
	if err := f.Set("AppArmor=false, AppArmorFields=false"); err != nil || f["AppArmor"] || f["AppArmorFields"] || len(f) != 2 {
		t.Errorf("Set: %v %v", f, err)
	}
	for _, bad := range []string{"AppArmor=maybe", "AppArmor", "=true", "a/b=true"} {
		if err := (featureGatesFlag{}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestRunUsageErrors(t *testing.T) {
	withServedCache(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give --apiserver and --kubelets"},
		{[]string{"--kubeconfig", kc, "--apiserver", "1.37.2"}, "not both"},
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "--kubeconfig"},
		{[]string{"--apiserver", "1.37.2", "--kubelets", "1.30.14"}, "skew"},
		{[]string{"--apiserver", "1.37.x"}, "--apiserver"},
		{[]string{"--kubeconfig", kc, "--timeout", "0s"}, "--timeout"},
		{[]string{"--kubeconfig", kc, "extra"}, "unexpected argument"},
		{[]string{"--kubeconfig", kc, "--suites", ""}, "at least one suite"},
		{[]string{"--kubeconfig", kc, "--suites", "../x"}, "not a suite name"},
		{[]string{"--kubeconfig", kc, "--suites", "seccomp,profiles", "--suite", kc}, "single suite"},
		{[]string{"--apiserver", "1.37.2", "--feature-gates", "AppArmor=false"}, "no longer exists in v1.37.2"},
		{[]string{"--apiserver", "1.32.13", "--feature-gates", "AppArmor=false"}, "locked to true"},
		{[]string{"--kubeconfig", kc, "--feature-gates", "AppArmor=false"}, "keeps its own"},
	} {
		err := runSuite(context.Background(), c.args)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %q: got %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "suites", "seccomp")); err != nil {
		t.Errorf("module root %s has no suites/seccomp: %v", root, err)
	}
}

func TestPartitions(t *testing.T) {
	if p := partitions(false, []string{"w1", "w2"}); len(p) != 1 || p[0].filter != "" {
		t.Errorf("serial run: %+v", p)
	}
	if p := partitions(true, nil); len(p) != 1 {
		t.Errorf("no workers: %+v", p)
	}
	p := partitions(true, []string{"w1", "w2"})
	if len(p) != 3 || p[0].filter != "api" || p[2].filter != "kubelet && node: containsAny w2" {
		t.Errorf("parallel run: %+v", p)
	}
}

func TestSuiteNames(t *testing.T) {
	if got := suiteTest("seccomp"); got != "TestSeccomp" {
		t.Errorf("suiteTest(seccomp) = %s", got)
	}
	if got := suiteTest("apparmor"); got != "TestAppArmor" {
		t.Errorf("suiteTest(apparmor) = %s", got)
	}
	if !partitioned["apparmor"] || partitioned["profiles"] {
		t.Errorf("partitioned = %v: the seccomp and AppArmor suites run per node, profiles in one process", partitioned)
	}
	if got := suitePackage("profiles"); got != "./suites/profiles" {
		t.Errorf("suitePackage(profiles) = %s", got)
	}
}

func TestFailedFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	err := reports.WriteJUnitFile(path, reports.Suite{Name: "seccomp", Results: []reports.Result{
		{ID: "seccomp/kubelet/enforce", Node: "w1", Verdict: reports.Fail},
		{ID: "seccomp/kubelet/enforce", Node: "w2", Verdict: reports.Pass},
		{ID: "seccomp/failure/row-4", Node: "w2", Verdict: reports.Fail},
		{ID: "seccomp/create/warning", Verdict: reports.Fail},
		{ID: "seccomp/api/types", Verdict: reports.Pass},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := failedFilter(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "(seccomp-kubelet-enforce && node: containsAny {w1}) || (seccomp-failure-row-4 && node: containsAny {w2}) || seccomp-create-warning"
	if got != want {
		t.Errorf("failedFilter = %q, want %q", got, want)
	}
	if got := idFilter([]string{"seccomp/api/types", "seccomp/create/none"}, nil); got != "seccomp-api-types || seccomp-create-none" {
		t.Errorf("idFilter = %q", got)
	}
}
