package clusters

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	senv "github.com/skewproof/skewproof/suites/env"
)

// goProgramSet describes static binaries built from one module served by the
// Go module proxy, through a throw-away wrapper module that requires it.
type goProgramSet struct {
	Module   string            // e.g. k8s.io/kubernetes
	Version  string            // e.g. v1.37.2
	Replaces map[string]string // module path -> version (replace directives)
	Programs map[string]string // binary name -> main package import path
	LDFlags  string
}

func (s goProgramSet) key() string {
	parts := []string{s.Module, s.Version, s.LDFlags}
	for _, m := range sortedKeys(s.Replaces) {
		parts = append(parts, "replace "+m+"="+s.Replaces[m])
	}
	for _, n := range sortedKeys(s.Programs) {
		parts = append(parts, "program "+n+"="+s.Programs[n])
	}
	return cacheKey(parts...)
}

// dirName names the cache entry, e.g. k8s.io_kubernetes-v1.37.2-<key>.
func (s goProgramSet) dirName() string {
	return strings.ReplaceAll(s.Module, "/", "_") + "-" + s.Version + "-" + s.key()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// goEnv is the environment of every build: static, reproducible, no
// toolchain download, no workspace of the caller's.
func goEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
}

func runIn(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out.String(), 40))
	}
	return nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// buildGoPrograms builds the set into <cache>/bin/<module-base>-<version>-<key>/
// and returns that directory; a complete earlier build is reused.
func buildGoPrograms(ctx context.Context, p *Progress, s goProgramSet) (string, error) {
	cache, err := senv.ResolveCacheDir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cache, "bin", s.dirName())
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		p.Step("%s %s binaries: cached (%s)", s.Module, s.Version, dst)
		return dst, nil
	}
	src := filepath.Join(cache, "src", s.dirName())
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	var gomod strings.Builder
	fmt.Fprintf(&gomod, "module skewproof.local/build\n\ngo 1.21\n\nrequire %s %s\n", s.Module, s.Version)
	if len(s.Replaces) > 0 {
		gomod.WriteString("\nreplace (\n")
		for _, m := range sortedKeys(s.Replaces) {
			fmt.Fprintf(&gomod, "\t%s => %s %s\n", m, m, s.Replaces[m])
		}
		gomod.WriteString(")\n")
	}
	var tools strings.Builder
	tools.WriteString("//go:build tools\n\npackage tools\n\nimport (\n")
	for _, n := range sortedKeys(s.Programs) {
		fmt.Fprintf(&tools, "\t_ %q\n", s.Programs[n])
	}
	tools.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod.String()), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools.String()), 0o644); err != nil {
		return "", err
	}
	env := goEnv()
	if err := p.Timed(fmt.Sprintf("resolving %s %s (go mod tidy)", s.Module, s.Version), func() error {
		// -e: tools.go imports main packages, which tidy reports but resolves.
		return runIn(ctx, src, env, "go", "mod", "tidy", "-e")
	}); err != nil {
		return "", fmt.Errorf("resolving %s %s through the Go module proxy: %w", s.Module, s.Version, err)
	}
	err = atomicDir(dst, func(tmp string) error {
		for _, n := range sortedKeys(s.Programs) {
			pkg := s.Programs[n]
			if err := p.Timed(fmt.Sprintf("go build %s (%s)", n, s.Version), func() error {
				return runIn(ctx, src, env, "go", "build", "-trimpath", "-ldflags", s.LDFlags, "-o", filepath.Join(tmp, n), pkg)
			}); err != nil {
				return fmt.Errorf("building %s %s: %w", n, s.Version, err)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return dst, nil
}

var replaceLine = regexp.MustCompile(`^\s*(k8s\.io/[A-Za-z0-9._/-]+)\s*=>\s*\./staging/`)

// kubernetesStagingReplaces reads k8s.io/kubernetes's go.mod at version v from
// the module cache (downloading it) and returns a replace of every staging
// module by its published v0.Y.Z release, since the module zip holds no
// staging/ directory.
func kubernetesStagingReplaces(ctx context.Context, v string) (map[string]string, error) {
	dir, err := moduleDir(ctx, "k8s.io/kubernetes", v)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	staging := "v0." + strings.SplitN(trimV(v), ".", 2)[1]
	reps := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := replaceLine.FindStringSubmatch(sc.Text()); m != nil {
			reps[m[1]] = staging
		}
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("k8s.io/kubernetes %s: no staging replace directives found in go.mod", v)
	}
	return reps, sc.Err()
}

// moduleDir downloads module@version through the Go module proxy (or finds it
// in the module cache) and returns its directory.
func moduleDir(ctx context.Context, module, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "skewproof-moddl-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.Output()
	dirRe := regexp.MustCompile(`"Dir":\s*"([^"]+)"`)
	if m := dirRe.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	errRe := regexp.MustCompile(`"Error":\s*"([^"]+)"`)
	if m := errRe.FindSubmatch(out); m != nil {
		return "", fmt.Errorf("downloading %s@%s: %s", module, version, m[1])
	}
	return "", fmt.Errorf("downloading %s@%s: %v", module, version, err)
}

// kubernetesLDFlags stamps the version into the binaries as the upstream
// release build does; without it they report a placeholder version.
func kubernetesLDFlags(v string) string {
	parts := strings.SplitN(trimV(v), ".", 3)
	var b strings.Builder
	b.WriteString("-s -w")
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean -X %s.buildDate=1970-01-01T00:00:00Z",
			pkg, "v"+trimV(v), pkg, parts[0], pkg, parts[1], pkg, pkg)
	}
	return b.String()
}

// KubernetesBinaries builds the named commands (kubelet, kubeadm, ...) of
// k8s.io/kubernetes at version v and returns the directory holding them.
func KubernetesBinaries(ctx context.Context, p *Progress, v string, names ...string) (string, error) {
	reps, err := kubernetesStagingReplaces(ctx, "v"+trimV(v))
	if err != nil {
		return "", err
	}
	progs := map[string]string{}
	for _, n := range names {
		progs[n] = "k8s.io/kubernetes/cmd/" + n
	}
	return buildGoPrograms(ctx, p, goProgramSet{
		Module:   "k8s.io/kubernetes",
		Version:  "v" + trimV(v),
		Replaces: reps,
		Programs: progs,
		LDFlags:  kubernetesLDFlags(v),
	})
}
