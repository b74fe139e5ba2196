//go:build integration

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/reports"
)

// TestIntegrationRuntimes certifies OCI runtimes the way a runtime vendor
// would: one cluster whose workers run kubelet 1.37.2 on runc, on crun, and
// on a runtime given with --oci-runtime that is deliberately wrong (it drops
// every container's seccomp section, testdata/oci/runc-without-seccomp).
// The seccomp kubelet rules must pass on runc and crun and fail on the wrong
// runtime's node only (the run exits 1), every result must name its node's
// OCI runtime, and the verdicts per id × node are pinned.
func TestIntegrationRuntimes(t *testing.T) {
	bin, err := filepath.Abs("../../bin/skewproof")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("build the binary first (make build): %v", err)
	}
	wrong, err := filepath.Abs("testdata/oci/runc-without-seccomp")
	if err != nil {
		t.Fatal(err)
	}
	const name = "rt-smoke"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--name", name, "--apiserver", "1.37.2",
		"--kubelets", "1.37.2,1.37.2+crun,1.37.2+no-seccomp,1.37.2@crio+crun", "--oci-runtime", "no-seccomp="+wrong,
		"--suites", "seccomp", "--ids", "seccomp/kubelet/enforce,seccomp/kubelet/localhost,seccomp/failure/row-3",
		"--junit-dir", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stderr, &out), io.MultiWriter(os.Stderr, &out)
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("skewproof run with three OCI runtimes and CRI-O: %s", time.Since(start).Round(time.Second))
	var exit *exec.ExitError
	if !errors.As(runErr, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("skewproof run: %v; want exit status 1 (the wrong runtime's rules fail)", runErr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "junit-*.xml"))
	suites, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	crio := name + "-worker4"
	want := map[string]string{name + "-worker": "runc 1.1.15", name + "-worker2": "crun 1.21", name + "-worker3": "no-seccomp 1.1.15", crio: "crun 1.21"}
	// What CRI-O does differently from containerd, seen on the nodes (the
	// oracle's CRI-O variants, skew/rules_runtimes.go): RuntimeDefault
	// blocks with ENOSYS (containers/common's default profile) where
	// containerd's blocks with EPERM, and a profile with an invalid action
	// fails at CreateContainer (CRI-O runs the OCI runtime's create there)
	// where containerd's fails at StartContainer.
	observed := map[string]map[string]string{
		"seccomp/kubelet/enforce":   {"containerd": "Operation not permitted", "cri-o": "Function not implemented"},
		"seccomp/failure/row-3":     {"containerd": "RunContainerError", "cri-o": "CreateContainerError"},
		"seccomp/kubelet/localhost": {},
	}
	var all []reports.Result
	for _, s := range suites {
		for _, r := range s.Results {
			all = append(all, r)
			t.Logf("%s on %s (%s, %s): %s %s", r.ID, r.Node, r.CRIRuntime, r.OCIRuntime, r.Verdict, reports.FirstLine(r.Reason+" "+r.Failure))
			if oci, ok := want[r.Node]; ok && r.OCIRuntime != oci {
				t.Errorf("%s on %s: OCI runtime %q, want %q", r.ID, r.Node, r.OCIRuntime, oci)
			}
			if r.Node == "" || r.Node == "cluster" {
				continue
			}
			cri := "containerd"
			if r.Node == crio {
				cri = "cri-o"
			}
			if r.CRIRuntime != "cri-o 1.34.0" && cri == "cri-o" || !strings.HasPrefix(r.CRIRuntime, "containerd ") && cri == "containerd" {
				t.Errorf("%s on %s: CRI runtime %q, want %s and its version", r.ID, r.Node, r.CRIRuntime, cri)
			}
			if w := observed[r.ID][cri]; w != "" && r.Node != name+"-worker3" && !strings.Contains(r.Observed, w) {
				t.Errorf("%s on %s (%s): observed %q, want it to show %q", r.ID, r.Node, r.CRIRuntime, r.Observed, w)
			}
		}
	}
	// Only the wrong runtime is one nobody read: its runtime-dependent
	// rules were judged against the KEP alone, and the record says which.
	rec, err := reports.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.RuntimeNotResearched) == 0 {
		t.Error("run.json lists no result judged against the KEP alone; the no-seccomp runtime was read by nobody")
	}
	for _, u := range rec.RuntimeNotResearched {
		if u.Node != name+"-worker3" {
			t.Errorf("run.json: %s on %s judged against the KEP alone; only the no-seccomp node's should be", u.ID, u.Node)
		}
	}
	if !strings.Contains(out.String(), "judged against the KEP alone") {
		t.Error("the summary does not say that results were judged against the KEP alone")
	}
	checkVerdicts(t, "runtimes-1.37.2", name, all)
}
