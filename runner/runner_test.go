package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, SuitePackage)); err != nil {
		t.Errorf("module root %s has no %s: %v", root, SuitePackage, err)
	}
}

func TestFindSuiteBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "skewproof")
	if _, err := FindSuiteBinary(exe); err == nil {
		t.Fatal("found a suite binary in an empty directory")
	}
	if err := os.WriteFile(filepath.Join(dir, SuiteBinaryName), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := FindSuiteBinary(exe); err != nil || got != filepath.Join(dir, SuiteBinaryName) {
		t.Errorf("FindSuiteBinary = %q, %v", got, err)
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
	if !partitioned["apparmor"] || !partitioned["seccomp"] || partitioned["profiles"] {
		t.Errorf("partitioned = %v: the seccomp and AppArmor suites run per node, profiles in one process", partitioned)
	}
}

func TestSuiteArgs(t *testing.T) {
	got := SuiteArgs("seccomp", Select("smoke", "kubelet && node: containsAny w1"), "enforce", "row-4")
	i := slices.Index(got, "-ginkgo.label-filter")
	if i < 0 || got[i+1] != "(seccomp) && ((smoke) && (kubelet && node: containsAny w1))" {
		t.Errorf("label filter of %q", got)
	}
	if j := slices.Index(got, "-ginkgo.focus"); j < 0 || got[j+1] != "enforce" {
		t.Errorf("focus of %q", got)
	}
	if j := slices.Index(got, "-ginkgo.skip"); j < 0 || got[j+1] != "row-4" {
		t.Errorf("skip of %q", got)
	}
	if got := SuiteArgs("profiles", "", "", ""); got[slices.Index(got, "-ginkgo.label-filter")+1] != "profiles" || slices.Contains(got, "-ginkgo.focus") {
		t.Errorf("plain suite: %q", got)
	}
	if !slices.Contains(got, "^"+TestName+"$") {
		t.Errorf("test function missing: %q", got)
	}
}

func TestFailedFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	err := reports.WriteJUnitFile(path, reports.Suite{Name: "seccomp", Results: []reports.Result{
		{ID: "seccomp/kubelet/enforce", Node: "w1", Verdict: skew.Fail},
		{ID: "seccomp/kubelet/enforce", Node: "w2", Verdict: skew.Pass},
		{ID: "seccomp/failure/row-4", Node: "w2", Verdict: skew.Fail},
		{ID: "seccomp/create/warning", Verdict: skew.Fail},
		{ID: "seccomp/api/types", Verdict: skew.Pass},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := FailedFilter(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "(seccomp-kubelet-enforce && node: containsAny {w1}) || (seccomp-failure-row-4 && node: containsAny {w2}) || seccomp-create-warning"
	if got != want {
		t.Errorf("FailedFilter = %q, want %q", got, want)
	}
	if got := IDFilter([]string{"seccomp/api/types", "seccomp/create/none"}, nil); got != "seccomp-api-types || seccomp-create-none" {
		t.Errorf("IDFilter = %q", got)
	}
}

// --rerun-failed takes a run's directory as well as a file, and reruns flaky
// specs too: a retry that passed is not a plain pass.
func TestFailedFilterFromDirectory(t *testing.T) {
	dir := t.TempDir()
	res := []reports.Result{
		{Name: "[seccomp/kubelet/enforce] a", ID: "seccomp/kubelet/enforce", Node: "w1", Verdict: skew.Flaky},
		{Name: "[seccomp/api/types] b", ID: "seccomp/api/types", Verdict: skew.Pass},
		{Name: "[seccomp/failure/row-4] c", ID: "seccomp/failure/row-4", Node: "w2", Verdict: skew.Fail},
	}
	if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-x.xml"), reports.Suite{Name: "seccomp", Results: res}); err != nil {
		t.Fatal(err)
	}
	// A per-process file of the same run must not be read twice.
	if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-x.seccomp.part-api.xml"), reports.Suite{Name: "seccomp", Results: res[1:2]}); err != nil {
		t.Fatal(err)
	}
	got, err := FailedFilter(dir)
	want := "(seccomp-kubelet-enforce && node: containsAny {w1}) || (seccomp-failure-row-4 && node: containsAny {w2})"
	if err != nil || got != want {
		t.Errorf("FailedFilter(dir) = %q, %v; want %q", got, err, want)
	}
	if _, err := FailedFilter(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no JUnit file") {
		t.Errorf("empty dir: %v", err)
	}
}
