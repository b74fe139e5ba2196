//go:build integration

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
)

// TestIntegrationAppArmorNode runs `skewproof run --apparmor-node` on a real
// cluster (control plane and one kind worker at 1.37.2, plus a worker whose
// kernel is User-Mode Linux with AppArmor) and requires the AppArmor
// enforcement spec to have been judged on the UML node — pass or deviation,
// never a skip — and the no-AppArmor row 6 to pass on the kind worker. It
// then checks that the run left no UML node behind.
func TestIntegrationAppArmorNode(t *testing.T) {
	bin, err := filepath.Abs("../../bin/skewproof")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("build the binary first (make build): %v", err)
	}
	const name = "uml-smoke"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--name", name, "--apiserver", "1.37.2", "--kubelets", "1.37.2",
		"--apparmor-node", "1.37.2", "--suites", "apparmor", "--ids", "apparmor/kubelet/enforce,apparmor/failure/row-6",
		"--junit-dir", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stderr, &out), io.MultiWriter(os.Stderr, &out)
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("skewproof run --apparmor-node: %s", time.Since(start).Round(time.Second))
	if ns, _ := filepath.Glob(filepath.Join(os.Getenv("HOME"), ".cache/skewproof/uml/nodes", name+"-*")); len(ns) > 0 {
		t.Errorf("the run left UML node state behind: %v", ns)
	}
	if out, _ := exec.Command("pgrep", "-f", "skewproof.cluster="+name).Output(); len(out) > 0 {
		t.Errorf("the run left UML kernel processes behind: %s", strings.Fields(string(out)))
	}
	if runErr != nil {
		t.Fatalf("skewproof run: %v", runErr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "junit-*.xml"))
	suites, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	uml := clusters.AppArmorNodeName(name)
	var all []reports.Result
	for _, s := range suites {
		for _, r := range s.Results {
			all = append(all, r)
			t.Logf("%s on %s: %s (%s)", r.ID, r.Node, r.Verdict, r.Reason)
		}
	}
	if !strings.HasPrefix(uml, name) {
		t.Fatalf("the AppArmor node %s is not named after its cluster %s: the verdict table cannot name it", uml, name)
	}
	// Every verdict per id × node, pinned (enforcement judged on the UML
	// node, row 6 on the kind worker).
	checkVerdicts(t, "apparmor-node-1.37.2", name, all)
}
