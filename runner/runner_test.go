package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/progress"
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

func TestOptionsComplete(t *testing.T) {
	o := Options{Name: "c1"}
	o.Complete()
	if o.JUnitName != "junit-c1.xml" || o.Progress == nil || o.OnSpec == nil {
		t.Errorf("completed %+v", o)
	}
	var seen []string
	o = Options{Name: "c2", JUnitName: "mine.xml", OnSpec: func(r reports.Result) { seen = append(seen, r.ID) }}
	o.Complete()
	o.OnSpec(reports.Result{ID: "x"})
	if o.JUnitName != "mine.xml" || len(seen) != 1 {
		t.Errorf("given settings not kept: %q, %v", o.JUnitName, seen)
	}
}

func TestTail(t *testing.T) {
	if got := Tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("Tail = %q", got)
	}
	if got := Tail("a", 5); got != "a" {
		t.Errorf("Tail of one line = %q", got)
	}
}

// A run of its own cluster that fails before its suites leaves a verdict
// for every reader: a JUnit file whose one test case is the failure, and a
// red run record (a matrix leg or nightly job without results is a failed
// leg, not one left out of the report). On an existing cluster the same
// failure is bad input and leaves nothing (cmd/skewproof's TestBadInput).
func TestRunFailedEarlyLeavesAFailure(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	o := Options{Name: "early", Suites: []string{"seccomp"}, JUnitDir: dir, Progress: progress.New(&out)}
	o.Complete()
	var res Outcome
	r := &run{o: o, p: o.Progress, out: &res, junitDir: dir, target: target{own: true}}
	r.reportEarly(context.Background(), errors.New("bringing up cluster early: kind create: node early-worker did not become Ready"))
	suites, rerr := reports.ReadJUnitFiles(res.JUnit)
	if rerr != nil || len(suites) != 1 || len(suites[0].Results) != 1 || suites[0].Results[0].Verdict != skew.Fail ||
		suites[0].Results[0].ID != SetUpID || !strings.Contains(suites[0].Results[0].Failure, "did not become Ready") {
		t.Fatalf("JUnit %s: %+v %v, want one failure %s", res.JUnit, suites, rerr, SetUpID)
	}
	rec, rerr := reports.ReadRecord(dir)
	if red, why := rec.Red(); rerr != nil || !red || rec.ExitStatus != 1 || !strings.Contains(why, "did not become Ready") {
		t.Errorf("run.json %+v %v, want red with exit status 1 and why", rec, rerr)
	}
}

// A certification is the whole catalogue, nothing narrowed or tolerated.
func TestValidateCertify(t *testing.T) {
	ok := Options{Timeout: time.Minute, FlakeAttempts: 2, Certify: true}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a whole certification: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Options)
		says string
	}{
		{"label filter", func(o *Options) { o.LabelFilter = "smoke" }, `label filter "smoke"`},
		{"focus", func(o *Options) { o.Focus = "row-1" }, `focus "row-1"`},
		{"allow flaky", func(o *Options) { o.AllowFlaky = true }, "--allow-flaky"},
	} {
		o := ok
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error saying %s", c.name, err, c.says)
		}
	}
}
