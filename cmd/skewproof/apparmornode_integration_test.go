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

// TestIntegrationAppArmorNode runs `skewproof run --apparmor-node all` on a
// real cluster (control plane at 1.37.2, kind workers at kubelets 1.34.4
// and 1.37.2, plus one worker per kubelet whose kernel is User-Mode Linux
// with AppArmor) and requires the AppArmor enforcement specs to have been
// judged on each UML node — pass or deviation, never a skip — and the
// no-AppArmor row 6 to pass on each kind worker, nothing else: no spec
// left to skip for want of AppArmor, no seccomp spec on a UML node whose
// kubelet a kind worker has. It then checks that the run left no UML node
// behind.
func TestIntegrationAppArmorNode(t *testing.T) {
	const name = "uml-smoke"
	all := runAppArmorNode(t, name, "1.34.4,1.37.2", "all", "apparmor,seccomp", "apparmor/kubelet/enforce,apparmor/failure/row-6,seccomp/kubelet/enforce")
	// Every verdict per id × node, pinned (enforcement judged on the UML
	// nodes, row 6 and seccomp on the kind workers).
	checkVerdicts(t, "apparmor-node-1.34.4-1.37.2", name, all)
	// The AppArmor nodes are one per kubelet, in --kubelets' order.
	judged := map[string]bool{}
	for _, r := range all {
		for i, want := range []string{"1.34.4", "1.37.2"} {
			if r.Node == clusters.AppArmorNodeName(name, i) {
				if r.Kubelet != want {
					t.Errorf("%s on %s: kubelet %s, want %s", r.ID, r.Node, r.Kubelet, want)
				}
				if r.ID == "apparmor/kubelet/enforce" && r.Verdict == "pass" {
					judged[want] = true
				}
			}
		}
	}
	if len(judged) != 2 {
		t.Errorf("apparmor/kubelet/enforce passed on the AppArmor nodes of kubelets %v, want 1.34.4 and 1.37.2", judged)
	}
}

// TestIntegrationAppArmorNodeCRIO is TestIntegrationAppArmorNode with CRI-O
// 1.34 and crun on the UML node: what CRI-O does with AppArmor where the
// kernel enforces it, which the kind nodes of a host without AppArmor
// cannot show. CRI-O's RuntimeDefault profile is crio-default, and a
// Localhost profile that is not loaded fails at CreateContainer with the
// OCI runtime's error, which does not name the profile (a deviation from
// the plan's event; the oracle's CRI-O variant, skew/rules_runtimes.go).
func TestIntegrationAppArmorNodeCRIO(t *testing.T) {
	const name = "uml-crio"
	all := runAppArmorNode(t, name, "1.37.2", "1.37.2@crio+crun", "apparmor", "apparmor/kubelet/enforce,apparmor/failure/row-3,apparmor/create/empty-annotation")
	uml := clusters.AppArmorNodeName(name, 0)
	want := map[string]string{
		"apparmor/create/empty-annotation": "AppArmor: crio-default (enforce)",
		"apparmor/failure/row-3":           "reason CreateContainerError",
		"apparmor/kubelet/enforce":         "Permission denied",
	}
	seen := 0
	for _, r := range all {
		if r.Node != uml {
			continue
		}
		seen++
		if r.CRIRuntime != "cri-o 1.34.0" || r.OCIRuntime != "crun 1.21" {
			t.Errorf("%s on %s: runtimes %q, %q; want cri-o 1.34.0, crun 1.21", r.ID, r.Node, r.CRIRuntime, r.OCIRuntime)
		}
		if w := want[r.ID]; !strings.Contains(r.Observed, w) {
			t.Errorf("%s on %s: observed %q, want it to show %q", r.ID, r.Node, r.Observed, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d results on the CRI-O AppArmor node %s, want %d", seen, uml, len(want))
	}
	checkVerdicts(t, "apparmor-node-crio-1.37.2", name, all)
}

// runAppArmorNode runs the ids of suites on a cluster named name (control
// plane at 1.37.2, kind workers at kubelets) with AppArmor nodes
// (--apparmor-node nodes), requires exit 0 and nothing of the UML nodes
// left behind, and returns the results.
func runAppArmorNode(t *testing.T, name, kubelets, nodes, suites, ids string) []reports.Result {
	t.Helper()
	bin, err := filepath.Abs("../../bin/skewproof")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("build the binary first (make build): %v", err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--name", name, "--apiserver", "1.37.2", "--kubelets", kubelets,
		"--apparmor-node", nodes, "--suites", suites, "--ids", ids, "--junit-dir", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stderr, &out), io.MultiWriter(os.Stderr, &out)
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("skewproof run --kubelets %s --apparmor-node %s: %s", kubelets, nodes, time.Since(start).Round(time.Second))
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
	read, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	uml := clusters.AppArmorNodeName(name, 0)
	var all []reports.Result
	for _, s := range read {
		for _, r := range s.Results {
			all = append(all, r)
			t.Logf("%s on %s (%s, %s): %s (%s)", r.ID, r.Node, r.CRIRuntime, r.OCIRuntime, r.Verdict, r.Reason)
		}
	}
	if !strings.HasPrefix(uml, name) {
		t.Fatalf("the AppArmor node %s is not named after its cluster %s: the verdict table cannot name it", uml, name)
	}
	return all
}
