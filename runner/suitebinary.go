package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/internal/progress"
)

// SuiteBinaryName is the e2e binary's file name; 'make build' puts it
// beside bin/skewproof.
const SuiteBinaryName = "skewproof-e2e.test"

// SuitePackage is the e2e binary's Go package, relative to the module root.
const SuitePackage = "./suites/e2e"

// FindSuiteBinary returns the e2e binary beside the executable exe, or an
// error naming the remedies.
func FindSuiteBinary(exe string) (string, error) {
	p := filepath.Join(filepath.Dir(exe), SuiteBinaryName)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p, nil
	}
	return "", fmt.Errorf("no %s beside %s: build it with 'make build', or pass --suite-binary PATH", SuiteBinaryName, exe)
}

// BuildSuiteBinary compiles the e2e binary with 'go test -c' from the
// source tree (development) into dir.
func BuildSuiteBinary(ctx context.Context, p *progress.Progress, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%w; run from the skewproof source tree or use the prebuilt %s", err, SuiteBinaryName)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("compiling the suites needs Go: %w; use the prebuilt %s ('make build')", err, SuiteBinaryName)
	}
	bin := filepath.Join(dir, SuiteBinaryName)
	err = p.Timed("compiling the suites ("+SuitePackage+")", func() error {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, SuitePackage)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go test -c %s: %v\n%s", SuitePackage, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	return bin, err
}

// ModuleRoot is the skewproof source tree above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/skewproof/skewproof\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the skewproof source tree (go.mod) was not found above the current directory")
		}
		dir = parent
	}
}
