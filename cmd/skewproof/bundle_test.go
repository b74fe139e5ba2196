package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/tartest"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// bundleRunDir writes a run directory as 'skewproof run' leaves it: a
// JUnit file with one result of each verdict, run.json and a suite log.
func bundleRunDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	results := []reports.Result{
		{Name: "[seccomp/api/types] x", ID: "seccomp/api/types", APIServer: "1.37.2", Verdict: skew.Pass},
		{Name: "[seccomp/kubelet/enforce] y [node:b-worker]", ID: "seccomp/kubelet/enforce", Node: "b-worker", Kubelet: "1.34.4", Verdict: skew.Deviation},
		{Name: "[seccomp/failure/row-4] z [node:b-worker]", ID: "seccomp/failure/row-4", Node: "b-worker", Kubelet: "1.34.4", Verdict: skew.Fail, Failure: "boom"},
		{Name: "[seccomp/failure/row-1] w [node:b-worker]", ID: "seccomp/failure/row-1", Node: "b-worker", Kubelet: "1.34.4", Verdict: skew.Skip, Reason: "no docker access"},
	}
	if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-b.xml"), reports.Suite{Name: "seccomp", Cluster: "b", Results: results}); err != nil {
		t.Fatal(err)
	}
	rec := reports.Record{
		Command: []string{"skewproof", "run", "--name", "b", "--apiserver", "1.37.2", "--kubelets", "1.34.4"}, Skewproof: "v0.3.0",
		Mode: "new-cluster", Cluster: "b", APIServer: "1.37.2", NodeAccess: "docker",
		Host: &reports.HostRecord{Kernel: "6.1.0", Seccomp: true, CgroupVersion: 2},
		Nodes: []reports.NodeRecord{
			{Name: "b-control-plane", ControlPlane: true, Kubelet: "v1.37.2", ContainerRuntime: "containerd://2.1.3"},
			{Name: "b-worker", Kubelet: "v1.34.4", ContainerRuntime: "containerd://2.1.3"},
		},
		Suites: []string{"seccomp"}, Started: time.Unix(1_800_000_000, 0), Finished: time.Unix(1_800_000_600, 0),
		JUnit: "junit-b.xml", Logs: []string{"seccomp-b.log"},
	}
	if err := reports.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "seccomp-b.log"), []byte("suite log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runCaptured runs the CLI and returns its exit code, stdout and stderr.
func runCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	oldOut := bundleOut
	bundleOut = &out
	defer func() { bundleOut = oldOut }()
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	oldErr := os.Stderr
	os.Stderr = errFile
	code := run(args)
	os.Stderr = oldErr
	errFile.Close()
	stderr, _ := os.ReadFile(errFile.Name())
	return code, out.String(), string(stderr)
}

func TestBundleCreateAndVerify(t *testing.T) {
	dir := bundleRunDir(t)
	out := filepath.Join(t.TempDir(), "results.tar.gz")
	code, stdout, stderr := runCaptured(t, "bundle", "--from", dir, "--out", out)
	if code != 0 {
		t.Fatalf("bundle: exit %d: %s", code, stderr)
	}
	want := "8 files, apiserver v1.37.2, 1 pass, 1 deviation, 1 fail, 1 skip; the run is not green"
	if stdout != "wrote "+out+": "+want+"\n" {
		t.Errorf("bundle printed %q", stdout)
	}
	// Intact, but not green: verify says so and exits 1, so that a gate on
	// it does not pass the run.
	code, stdout, stderr = runCaptured(t, "bundle", "verify", out)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "is intact, but "+want) {
		t.Errorf("verify: exit %d, %q, %s", code, stdout, stderr)
	}

	// An existing --out is refused unless --force; the file is kept.
	before, _ := os.ReadFile(out)
	code, _, stderr = runCaptured(t, "bundle", "--from", dir, "--out", out)
	if code != 2 || !strings.Contains(stderr, "--force") {
		t.Errorf("existing --out: exit %d, %s", code, stderr)
	}
	if code, _, stderr = runCaptured(t, "bundle", "--from", dir, "--out", out, "--force"); code != 0 {
		t.Errorf("--force: exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(out)
	if !bytes.Equal(before, after) {
		t.Errorf("the same directory gave a different bundle")
	}
}

// A run the CLI called red (run.json: a suite process killed after its
// specs reported) is not green to verify, whatever its JUnit file says;
// a green one is "ok".
func TestBundleVerifyFollowsTheRunsVerdict(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		reason string
		code   int
		says   string
	}{
		{"green", 0, "", 0, "ok: 8 files, apiserver v1.37.2, 1 pass, 0 deviation, 0 fail, 0 skip; the run is green\n"},
		{"red", 1, "a suite failed outside the specs: signal: killed", 1, "the run is not green (run.json: a suite failed outside the specs: signal: killed)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := reports.Result{Name: "[seccomp/api/types] x", ID: "seccomp/api/types", APIServer: "1.37.2", Verdict: skew.Pass}
			rec := reports.Record{Command: []string{"skewproof", "run"}, Mode: "new-cluster", Cluster: "b", APIServer: "1.37.2", JUnit: "junit-b.xml"}
			var err error
			if c.reason != "" {
				err = errors.New(c.reason)
			}
			rec.SetVerdict(c.status, err)
			verifyOneResult(t, reports.Suite{Name: "seccomp", Cluster: "b", Results: []reports.Result{res}}, rec, c.code, c.says)
		})
	}
}

// verifyOneResult bundles a run directory of one JUnit suite and its
// record, and checks what 'bundle verify' says of it.
func verifyOneResult(t *testing.T, suite reports.Suite, rec reports.Record, code int, says string) {
	t.Helper()
	dir := t.TempDir()
	if err := reports.WriteJUnitFile(filepath.Join(dir, rec.JUnit), suite); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results.tar.gz")
	if code, _, stderr := runCaptured(t, "bundle", "--from", dir, "--out", out); code != 0 {
		t.Fatalf("bundle: exit %d: %s", code, stderr)
	}
	got, stdout, stderr := runCaptured(t, "bundle", "verify", out)
	if got != code || !strings.Contains(stdout+stderr, says) {
		t.Errorf("verify: exit %d, %q %q; want exit %d saying %q", got, stdout, stderr, code, says)
	}
}

// A certification bundle is green only when every result was judged but
// for skips for a fact of the release, and its suites say certification.
func TestBundleVerifyCertification(t *testing.T) {
	for _, c := range []struct {
		name string
		res  reports.Result
		cert bool
		code int
		says string
	}{
		{"release skip", reports.Result{Verdict: skew.Skip, SkipKind: reports.SkipRelease, Reason: "gone at v1.37"}, true, 0, "the certification run is green"},
		{"host skip", reports.Result{Verdict: skew.Skip, SkipKind: reports.SkipHost, Reason: "host has no AppArmor"}, true, 1, "host has no AppArmor"},
		{"suite not certified", reports.Result{Verdict: skew.Pass}, false, 1, "does not say certification=true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := c.res
			res.Name, res.ID, res.APIServer = "[apparmor/feature-gate] x", "apparmor/feature-gate", "1.37.2"
			rec := reports.Record{Command: []string{"skewproof", "run", "--certify"}, Mode: "new-cluster", Cluster: "b", APIServer: "1.37.2", JUnit: "junit-b.xml", Certification: true}
			rec.SetVerdict(0, nil)
			verifyOneResult(t, reports.Suite{Name: "apparmor", Cluster: "b", Certification: c.cert, Results: []reports.Result{res}}, rec, c.code, c.says)
		})
	}
}

func TestBundleVerifyTampered(t *testing.T) {
	dir := bundleRunDir(t)
	out := filepath.Join(t.TempDir(), "results.tar.gz")
	if code, _, stderr := runCaptured(t, "bundle", "--from", dir, "--out", out); code != 0 {
		t.Fatalf("bundle: exit %d: %s", code, stderr)
	}
	// Change one byte of e2e.log inside the tar.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range tartest.ReadGzipFile(t, out) {
		if e.Header.Name == "e2e.log" {
			e.Data[0] ^= 1
		}
		tw.WriteHeader(e.Header)
		tw.Write(e.Data)
	}
	tw.Close()
	zw.Close()
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCaptured(t, "bundle", "verify", bad)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "e2e.log") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("tampered: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestBundleBadInput(t *testing.T) {
	dir := bundleRunDir(t)
	noRecord := bundleRunDir(t)
	os.Remove(filepath.Join(noRecord, "run.json"))
	outDir := t.TempDir()
	out := filepath.Join(outDir, "r.tar.gz")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bundle", "--from", dir}, 2, "--out"},
		{[]string{"bundle", "--out", out}, 2, "--from"},
		{[]string{"bundle", "--from", dir, "--out", filepath.Join(outDir, "r.zip")}, 2, "tar.gz"},
		{[]string{"bundle", "--from", filepath.Join(dir, "nope"), "--out", out}, 2, "not a directory"},
		{[]string{"bundle", "--from", noRecord, "--out", out}, 2, "--junit-dir"},
		{[]string{"bundle", "--from", dir, "--out", out, "extra"}, 2, "extra"},
		{[]string{"bundle", "verify"}, 2, "one bundle"},
		{[]string{"bundle", "verify", "a.tar.gz", "b.tar.gz"}, 2, "one bundle"},
		{[]string{"bundle", "verify", filepath.Join(outDir, "missing.tar.gz")}, 1, "missing.tar.gz"},
	} {
		code, _, stderr := runCaptured(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d (want %d), stderr %q (want one line naming %s)", c.args, code, c.code, stderr, c.msg)
		}
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
