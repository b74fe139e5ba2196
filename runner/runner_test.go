package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	senv "github.com/skewproof/skewproof/suites/env"

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

// specsOf are the labels a dry run lists for the suites on workers: the
// seccomp suite's API rules, and per worker a rule of its own process that
// waits for the garbage collector, slow rules and the rest; the AppArmor
// suite's API and kubelet rules; the profiles suite's specs, one waiting
// for the collector and one flooding it.
func specsOf(workers ...string) []SpecLabels {
	// An API rule of a slow family: slow matters on a node only.
	specs := []SpecLabels{{"seccomp", "api"}, {"seccomp", "update", senv.LabelSlow, "api"}, {"apparmor", "api"}}
	for _, w := range workers {
		specs = append(specs,
			SpecLabels{"seccomp", "failure", senv.LabelSlow, "seccomp-failure-row-4", senv.LabelOwnProcess, senv.LabelWaitsForGC, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "failure", senv.LabelSlow, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "update", senv.LabelSlow, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "kubelet", "node:" + w},
			SpecLabels{"apparmor", "kubelet", "node:" + w})
	}
	return append(specs, SpecLabels{"profiles", "profiles-node-status-per-node", senv.LabelWaitsForGC},
		SpecLabels{"profiles", "profiles-agent-ready"},
		SpecLabels{"profiles", "profiles-node-status-scale", senv.LabelFloodsGC})
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
	serial := plan(Suites, false, specsOf("w1", "w2"))
	if got := keys(serial); !slices.Equal(got, []string{"seccomp/all", "apparmor/all", "profiles/all"}) {
		t.Errorf("serial run: %v", got)
	}
	for i, j := range serial {
		if j.filter != "" || (i == 0) != (j.after == nil) || i > 0 && j.after[0] != serial[i-1].key() {
			t.Errorf("serial job %d: %+v", i, j)
		}
	}
	// No workers: the API rules and the profiles suite.
	if got := keys(plan(Suites, true, specsOf())); !slices.Equal(got, []string{"seccomp/main", "apparmor/main", "profiles/main.gc-flood", "profiles/main.rest"}) {
		t.Errorf("no workers: %v", got)
	}
	jobs := plan(Suites, true, specsOf("w1", "w2"))
	want := []string{"seccomp/api", "seccomp/w1.own", "seccomp/w1.slow", "seccomp/w1.rest", "seccomp/w2.own", "seccomp/w2.slow", "seccomp/w2.rest",
		"apparmor/api", "apparmor/w1", "apparmor/w2", "profiles/main.gc-flood", "profiles/main.rest"}
	if got := keys(jobs); !slices.Equal(got, want) {
		t.Fatalf("parallel run: %v, want %v", got, want)
	}
	by := map[string]job{}
	for _, j := range jobs {
		by[j.key()] = j
		if j.after != nil || j.key() != "profiles/main.gc-flood" && j.afterSpecs != nil {
			t.Errorf("%s waits for %v / the specs of %v: only the flood waits, for specs", j.key(), j.after, j.afterSpecs)
		}
	}
	for key, want := range map[string]string{
		"seccomp/api":            "node: isEmpty",
		"apparmor/w2":            "node: containsAny w2",
		"seccomp/w1.own":         "(node: containsAny w1) && ((" + senv.LabelOwnProcess + ") && (!(" + senv.LabelFloodsGC + ")))",
		"seccomp/w1.slow":        "(node: containsAny w1) && ((" + senv.LabelSlow + ") && (!(" + senv.LabelFloodsGC + " || " + senv.LabelOwnProcess + ")))",
		"seccomp/w1.rest":        "(node: containsAny w1) && (!(" + senv.LabelFloodsGC + " || " + senv.LabelOwnProcess + " || " + senv.LabelSlow + "))",
		"profiles/main.gc-flood": "(node: isEmpty) && (" + senv.LabelFloodsGC + ")",
	} {
		if f := by[key].filter; f != want {
			t.Errorf("%s filter %q, want %q", key, f, want)
		}
	}
	if got := by["profiles/main.gc-flood"].afterSpecs; !slices.Equal(got, []string{"seccomp/w1.own", "seccomp/w2.own", "profiles/main.rest"}) {
		t.Errorf("the flood waits for %v", got)
	}
	// Without the seccomp suite the flood waits for the profiles suite only.
	if got := plan([]string{"profiles", "apparmor"}, true, specsOf("w1")); got[0].key() != "profiles/main.gc-flood" || !slices.Equal(got[0].afterSpecs, []string{"profiles/main.rest"}) {
		t.Errorf("profiles and AppArmor: %+v", got)
	}
	// A selection of one spec: one process, named by its group.
	if got := keys(plan([]string{"seccomp"}, true, []SpecLabels{{"seccomp", "failure", senv.LabelSlow, "node:w1"}})); !slices.Equal(got, []string{"seccomp/w1"}) {
		t.Errorf("one slow spec: %v", got)
	}
	// A suite the selection has no spec of has no process.
	if got := keys(plan([]string{"seccomp", "apparmor"}, true, []SpecLabels{{"apparmor", "api"}})); !slices.Equal(got, []string{"apparmor/main"}) {
		t.Errorf("AppArmor specs only: %v", got)
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
