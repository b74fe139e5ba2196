package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

func TestPlan(t *testing.T) {
	keys := func(jobs []job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.key())
		}
		return out
	}
	// Serial: one process per suite, one after the other.
	serial := plan(Suites, false, []string{"w1", "w2"})
	if got := keys(serial); !slices.Equal(got, []string{"seccomp/all", "apparmor/all", "profiles/all"}) {
		t.Errorf("serial run: %v", got)
	}
	for i, j := range serial {
		if j.filter != "" || (i == 0) != (j.after == nil) || i > 0 && j.after[0] != serial[i-1].key() {
			t.Errorf("serial job %d: %+v", i, j)
		}
	}
	if got := keys(plan(Suites, true, nil)); len(got) != 3 {
		t.Errorf("no workers: %v", got)
	}
	jobs := plan(Suites, true, []string{"w1", "w2"})
	want := []string{"seccomp/api", "seccomp/w1.row-4", "seccomp/w1.failure", "seccomp/w1.rest", "seccomp/w2.row-4", "seccomp/w2.failure", "seccomp/w2.rest",
		"apparmor/api", "apparmor/w1", "apparmor/w2", "profiles/main", "profiles/scale"}
	if got := keys(jobs); !slices.Equal(got, want) {
		t.Fatalf("parallel run: %v, want %v", got, want)
	}
	by := map[string]job{}
	for _, j := range jobs {
		by[j.key()] = j
		if j.after != nil || j.key() != "profiles/scale" && j.afterSpecs != nil {
			t.Errorf("%s waits for %v / the specs of %v: only the scale bench waits, for specs", j.key(), j.after, j.afterSpecs)
		}
	}
	if f := by["seccomp/api"].filter; f != "api" {
		t.Errorf("API job filter %q", f)
	}
	if f := by["apparmor/w2"].filter; f != "kubelet && node: containsAny w2" {
		t.Errorf("AppArmor worker job filter %q", f)
	}
	if f := by["seccomp/w1.row-4"].filter; f != "(kubelet && node: containsAny w1) && (seccomp-failure-row-4)" {
		t.Errorf("row-4 job filter %q", f)
	}
	if f := by["seccomp/w1.failure"].filter; f != "(kubelet && node: containsAny w1) && ((failure || update) && (!((seccomp-failure-row-4))))" {
		t.Errorf("failure job filter %q", f)
	}
	if f := by["seccomp/w1.rest"].filter; f != "(kubelet && node: containsAny w1) && (!((seccomp-failure-row-4) || (failure || update)))" {
		t.Errorf("rest job filter %q", f)
	}
	if f := by["profiles/main"].filter; f != "!"+gcBench {
		t.Errorf("profiles main filter %q", f)
	}
	if got := by["profiles/scale"].afterSpecs; !slices.Equal(got, []string{"seccomp/w1.row-4", "seccomp/w2.row-4", "profiles/main"}) {
		t.Errorf("the scale bench waits for %v", got)
	}
	// Without the seccomp suite the bench waits for the profiles suite only.
	if got := plan([]string{"profiles", "apparmor"}, true, []string{"w1"}); got[1].key() != "profiles/scale" || !slices.Equal(got[1].afterSpecs, []string{"profiles/main"}) {
		t.Errorf("profiles and AppArmor: %+v", got)
	}
	if !partitioned["apparmor"] || !partitioned["seccomp"] || partitioned["profiles"] {
		t.Errorf("partitioned = %v: the seccomp and AppArmor suites run per node", partitioned)
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

// The shared settings are refused in the words of their flags, whichever
// front end sets them.
func TestOptionsValidate(t *testing.T) {
	ok := Options{Suites: []string{"seccomp"}, Timeout: time.Minute, FlakeAttempts: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for want, mod := range map[string]func(*Options){
		"--timeout must be positive":                               func(o *Options) { o.Timeout = 0 },
		"--suites: give at least one suite":                        func(o *Options) { o.Suites = nil },
		`--suites: unknown suite "bogus"`:                          func(o *Options) { o.Suites = []string{"bogus"} },
		"--flake-attempts must be at least 1":                      func(o *Options) { o.FlakeAttempts = 0 },
		"--allowed-not-ready-nodes must be 0 or more":              func(o *Options) { o.AllowedNotReadyNodes = -1 },
		"--allowed-not-ready-nodes applies to an existing cluster": func(o *Options) { o.AllowedNotReadyNodes = 1 },
	} {
		o := ok
		mod(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
		if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run = %v, want %q", err, want)
		}
	}
}
