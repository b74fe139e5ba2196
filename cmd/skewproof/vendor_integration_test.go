//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

// hydrophoneVersion is the Hydrophone release the integration test installs
// from the Go module proxy.
const hydrophoneVersion = "v0.8.0"

// TestIntegrationVendorMode runs skewproof the ways a vendor does against a
// cluster it already has (here a kind cluster, 1.37.2 with a 1.34.4 worker):
//   - the CLI from a directory holding only bin/skewproof (the launcher),
//     bin/skewproof-core and bin/skewproof-e2e.test, with no Go on PATH
//     and no source tree, all suites, as the ServiceAccount 'skewproof
//     rbac' prints, with no request refused;
//   - Hydrophone with the conformance image: a passing focus exits 0, a
//     focus that selects nothing of skewproof's ([Conformance]) exits
//     non-zero, and both fetch e2e.log and junit_01.xml.
//
// Afterwards nothing of the runs may remain on the cluster.
func TestIntegrationVendorMode(t *testing.T) {
	srcBin, err := filepath.Abs("../../bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"skewproof", cli.CoreName, "skewproof-e2e.test"} {
		if _, err := os.Stat(filepath.Join(srcBin, f)); err != nil {
			t.Fatalf("build the binaries first (make build): %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	const name = "vendor"
	work := t.TempDir()
	kubeconfig := filepath.Join(work, "kubeconfig")
	up := exec.CommandContext(ctx, filepath.Join(srcBin, "skewproof"), "cluster", "up", "--name", name,
		"--apiserver", "1.37.2", "--kubelets", "1.34.4", "--kubeconfig", kubeconfig)
	up.Stdout, up.Stderr = os.Stderr, os.Stderr
	t.Cleanup(func() {
		down := exec.Command(filepath.Join(srcBin, "skewproof"), "cluster", "down", "--name", name, "--kubeconfig", kubeconfig)
		down.Stdout, down.Stderr = os.Stderr, os.Stderr
		if err := down.Run(); err != nil {
			t.Errorf("cluster down: %v", err)
		}
	})
	if err := up.Run(); err != nil {
		t.Fatalf("cluster up: %v", err)
	}

	t.Run("CLIWithoutGoOrSources", func(t *testing.T) {
		// The three binaries alone, outside the source tree, run from there.
		dir := t.TempDir()
		for _, f := range []string{"skewproof", cli.CoreName, "skewproof-e2e.test"} {
			b, err := os.ReadFile(filepath.Join(srcBin, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		path := noGoPath(t)
		junit := filepath.Join(dir, "results")
		cl, err := kubeclient.Load(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		// As a vendor without cluster-admin runs it: the ServiceAccount of
		// 'skewproof rbac' (docs/rbac.md), whose rules are the runner's and
		// those the suites declare. Any request of the run the API server
		// answers 403 (but those the specs provoke) is a permission missing
		// from a declaration, even where the run falls back and passes.
		runnerCfg := runnerKubeconfig(ctx, t, filepath.Join(dir, "skewproof"), kubeconfig, cl.Core)
		logRequests(ctx, t, cl.Core)
		start := time.Now()
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "skewproof"), "run", "--kubeconfig", runnerCfg, "--name", name,
			"--suites", "seccomp,apparmor,profiles", "--junit-dir", junit)
		cmd.Dir = dir
		cmd.Env = append(filteredEnv("PATH", "GOROOT", "GOPATH", "GOFLAGS"), "PATH="+path)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Security (docs/reliability.md): the whole run is watched.
		sec := watchSecurity(ctx, t, cl.Core, name, cmd.Process.Pid)
		err = cmd.Wait()
		sec.stop(t)
		out := buf.Bytes()
		t.Logf("skewproof run --kubeconfig, all suites, no Go: %s", time.Since(start).Round(time.Second))
		if strings.Contains(string(out), "compiling") {
			t.Errorf("the run compiled something:\n%s", out)
		}
		if refused := refusedRequests(ctx, t, name+"-control-plane", start); len(refused) > 0 {
			t.Errorf("the API server refused %d requests of the run as the ServiceAccount of 'skewproof rbac' (403: a permission the runner or a suite uses and does not declare):\n%s", len(refused), strings.Join(refused, "\n"))
		}
		if err != nil {
			t.Fatalf("skewproof run: %v\n%s", err, tail(string(out), 60))
		}
		suites, err := reports.ReadJUnitFiles(filepath.Join(junit, "junit-"+name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		var all []reports.Result
		for _, s := range suites {
			all = append(all, s.Results...)
			t.Logf("suite %s: %v", s.Name, reports.Count(s.Results))
		}
		// Every verdict per id × node, pinned: a pass that became a skip
		// fails here even though the run exited 0.
		checkVerdicts(t, "vendor-1.37.2-1.34.4", name, all)
		if _, err := reports.ReadRecord(junit); err != nil {
			t.Errorf("run.json: %v", err)
		}
		// The run's bundle verifies; a tampered copy does not.
		bundle := checkBundle(t, ctx, filepath.Join(dir, "skewproof"), junit)
		b, err := os.ReadFile(bundle)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		tampered := filepath.Join(t.TempDir(), "tampered.tar.gz")
		if err := os.WriteFile(tampered, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.CommandContext(ctx, filepath.Join(dir, "skewproof"), "bundle", "verify", tampered).CombinedOutput(); err == nil {
			t.Errorf("a tampered bundle verified: %s", out)
		}
	})

	t.Run("Hydrophone", func(t *testing.T) {
		gobin := filepath.Join(work, "gobin")
		inst := exec.CommandContext(ctx, "go", "install", "sigs.k8s.io/hydrophone@"+hydrophoneVersion)
		inst.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod")
		inst.Dir = work
		if out, err := inst.CombinedOutput(); err != nil {
			t.Fatalf("installing Hydrophone %s from the module proxy: %v\n%s", hydrophoneVersion, err, out)
		}
		load := exec.CommandContext(ctx, filepath.Join(srcBin, "skewproof"), "images", "conformance", "--cluster", name)
		b, err := load.CombinedOutput()
		if err != nil {
			t.Fatalf("images conformance: %v\n%s", err, b)
		}
		ref := strings.Fields(string(b))[0]
		t.Logf("conformance image %s", ref)
		hydrophone := func(t *testing.T, focus string) (string, string, error) {
			outDir := t.TempDir()
			cmd := exec.CommandContext(ctx, filepath.Join(gobin, "hydrophone"), "--kubeconfig", kubeconfig,
				"--conformance-image", ref, "--busybox-image", ref, "--focus", focus, "--output-dir", outDir)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("hydrophone --focus %q: %s, %v", focus, time.Since(start).Round(time.Second), err)
			if err != nil {
				// Hydrophone removes its namespace and RBAC itself after a
				// run, not after a failed deployment.
				_ = exec.CommandContext(ctx, filepath.Join(gobin, "hydrophone"), "--kubeconfig", kubeconfig, "--cleanup").Run()
			}
			for _, f := range []string{"e2e.log", "junit_01.xml"} {
				if fi, serr := os.Stat(filepath.Join(outDir, f)); serr != nil || fi.Size() == 0 {
					t.Errorf("Hydrophone fetched no %s: %v\n%s", f, serr, tail(string(out), 40))
				}
			}
			return string(out), outDir, err
		}
		t.Run("PassingFocus", func(t *testing.T) {
			out, dir, err := hydrophone(t, "seccomp/api/types|profiles/agent/ready")
			if err != nil {
				t.Fatalf("hydrophone exited with %v for a passing focus:\n%s", err, tail(out, 60))
			}
			log, _ := os.ReadFile(filepath.Join(dir, "e2e.log"))
			for _, want := range []string{"Will run 2 of ", "kube-apiserver version: v1.37.2", "Ran 2 of ", "SUCCESS!"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("e2e.log lacks %q:\n%s", want, log)
				}
			}
			if n := strings.Count(string(log), "•"); n != 2 {
				t.Errorf("e2e.log has %d progress marks, want 2 (one per spec)", n)
			}
			if !strings.Contains(out, "Ginkgo ran 1 suite") {
				t.Errorf("the container log lacks Ginkgo's closing line:\n%s", tail(out, 30))
			}
			j, _ := os.ReadFile(filepath.Join(dir, "junit_01.xml"))
			var root struct{ XMLName xml.Name }
			if err := xml.Unmarshal(j, &root); err != nil || root.XMLName.Local != "testsuites" {
				t.Errorf("junit_01.xml root %q: %v", root.XMLName.Local, err)
			}
			suites, err := reports.ReadJUnitFiles(filepath.Join(dir, "junit_01.xml"))
			if err != nil {
				t.Fatal(err)
			}
			var rs []reports.Result
			for _, s := range suites {
				rs = append(rs, s.Results...)
			}
			if c := reports.Count(rs); len(rs) != 2 || c[skew.Pass] != 2 {
				t.Errorf("junit_01.xml: %d results, %v", len(rs), c)
			}
			// What Hydrophone fetched bundles (the record is in e2e.log).
			checkBundle(t, ctx, filepath.Join(srcBin, "skewproof"), dir)
		})
		t.Run("FailingFocus", func(t *testing.T) {
			out, dir, err := hydrophone(t, `\[Conformance\]`)
			if err == nil {
				t.Fatalf("hydrophone exited 0 for a focus that selects no skewproof spec:\n%s", tail(out, 40))
			}
			log, _ := os.ReadFile(filepath.Join(dir, "e2e.log"))
			if !strings.Contains(string(log), "Will run 0 of ") || !strings.Contains(string(log), "no spec selected") {
				t.Errorf("e2e.log does not say why:\n%s", log)
			}
		})
	})

	// Nothing of the runs remains: no namespace or RuntimeClass of a run,
	// no profile CRD, no node agent.
	cl, err := kubeclient.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := cl.Core
	if nl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "skewproof.io/run"}); err != nil || len(nl.Items) > 0 {
		t.Errorf("namespaces of a run remain: %v %v", nl, err)
	}
	if rl, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{}); err != nil || len(rl.Items) > 0 {
		t.Errorf("RuntimeClasses remain: %d %v", len(rl.Items), err)
	}
	for _, ns := range []string{"skewproof-fixtures", "skewproof-profiles-e2e", "conformance"} {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			t.Errorf("namespace %s remains", ns)
		}
	}
	if rs, err := cs.Discovery().ServerResourcesForGroupVersion(api.GroupVersion.String()); err == nil && len(rs.APIResources) > 0 {
		t.Errorf("the skewproof CRDs remain: %d resources", len(rs.APIResources))
	}
}

// checkBundle bundles a results directory and verifies the bundle.
func checkBundle(t *testing.T, ctx context.Context, bin, dir string) string {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "results.tar.gz")
	if out, err := exec.CommandContext(ctx, bin, "bundle", "--from", dir, "--out", bundle).CombinedOutput(); err != nil {
		t.Fatalf("bundle: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "bundle", "verify", bundle).CombinedOutput()
	if err != nil {
		t.Fatalf("bundle verify: %v\n%s", err, out)
	}
	t.Logf("bundle verify: %s", strings.TrimSpace(string(out)))
	return bundle
}

// noGoPath is PATH without any directory that holds a go binary.
func noGoPath(t *testing.T) string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func filteredEnv(drop ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			if k == d {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
