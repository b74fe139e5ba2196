package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/skew/served"
)

// TestLauncherStaysSmall keeps the launcher's reason to exist: it links
// none of the cluster machinery, whose package initialisation is what
// makes the full CLI slow to start.
func TestLauncherStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, heavy := range []string{"k8s.io/client-go", "k8s.io/api/", "sigs.k8s.io/kind", "github.com/google/go-containerregistry", "github.com/skewproof/skewproof/runner", "github.com/skewproof/skewproof/clusters"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("the launcher links %s", p)
			}
		}
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee := new(exec.ExitError); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return result{o.String(), e.String(), code}
}

func build(t *testing.T, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// trackSources looks at every source file of this module that the package
// pkg is built from. The test builds pkg with 'go build', which go test's
// result cache does not see; the files a test opens or stats are part of
// its cache key, so a change to the full CLI's sources (not a dependency of
// this package) now runs TestLauncher again instead of reusing its result.
func trackSources(t *testing.T, pkg string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatalf("go list -deps %s: no source files of this module", pkg)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLauncher builds the launcher and the full CLI as 'make build' lays
// them out and checks that the pair behaves as the full CLI alone: the
// same output, messages and exit status for simulate (run by the
// launcher itself, also with no skewproof-core anywhere) and for other
// commands (handed to skewproof-core), and one line with the remedy
// when skewproof-core is missing.
func TestLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both executables")
	}
	t.Setenv(cachedir.Env, t.TempDir())
	path, err := served.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	if err := served.WriteCache(path, []string{"v1.33.13", "v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"}, "test"); err != nil {
		t.Fatal(err)
	}
	trackSources(t, "../skewproof")
	bin := t.TempDir()
	launcher, core := filepath.Join(bin, "skewproof"), filepath.Join(bin, cli.CoreName)
	build(t, ".", launcher)
	build(t, "../skewproof", core)
	alone := filepath.Join(t.TempDir(), "skewproof")
	build(t, ".", alone)
	noPath := []string{"PATH=/nonexistent"}

	cases := [][]string{
		{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.34.4"},
		{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.34.4", "--format", "json", "--apparmor", "off"},
		{"simulate", "--upgrade", "1.33.13", "1.37.2", "--format", "markdown"},
		{"simulate", "--deviations", "1.33..1.37"},
		{"simulate", "--help"},
		{"simulate", "--apiserver", "1.36.2"},                         // unserved: answered, with a note on stderr
		{"simulate", "--apiserver", "1.38.0", "--kubelet", "1.37.2"},  // beyond the sources read: every rule skips
		{"simulate", "--apiserver", "1.37"},                           // malformed: 2
		{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.33.13"}, // beyond the skew policy: 2
		{"simulate", "--apiserver", "1.37.2", "extra"},                // stray argument: 2
		{"simulate", "--no-such-flag"},                                // unknown flag: 2
		{"simulate", "-x"},                                            // unknown shorthand: 2
		{"rbac"},
		{"cluster", "down", "stray"}, // a usage error of skewproof-core: 2
		{"--help"},
		{},
	}
	for _, args := range cases {
		want := run(t, core, noPath, args...)
		if got := run(t, launcher, noPath, args...); got != want {
			t.Errorf("skewproof %q:\n got  %+v\n want %+v", args, got, want)
		}
		if len(args) == 0 || args[0] != "simulate" {
			continue
		}
		if want.code == 0 && want.stdout == "" {
			t.Errorf("skewproof %q printed nothing", args)
		}
		// Without skewproof-core, simulate is the launcher's own.
		if got := run(t, alone, noPath, args...); got != want {
			t.Errorf("skewproof %q without %s:\n got  %+v\n want %+v", args, cli.CoreName, got, want)
		}
	}

	// Another command without skewproof-core: one line naming the remedy.
	got := run(t, alone, noPath, "rbac")
	if got.code != 1 || got.stdout != "" || strings.Count(got.stderr, "\n") != 1 || !strings.Contains(got.stderr, cli.CoreName+" not found") || !strings.Contains(got.stderr, "make build") {
		t.Errorf("without %s: %+v", cli.CoreName, got)
	}
	// skewproof-core on PATH instead of beside the launcher.
	want := run(t, core, noPath, "rbac")
	if got := run(t, alone, []string{"PATH=" + bin}, "rbac"); got != want {
		t.Errorf("%s on PATH:\n got  %+v\n want %+v", cli.CoreName, got, want)
	}
}
