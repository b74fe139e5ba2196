// Package gobuild builds static binaries (Kubernetes, etcd, the
// pause program) from modules the Go module proxy serves, into the build
// cache: go build through a throw-away wrapper module that requires the
// module, with replace directives where the module needs them.
package gobuild

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"
	"golang.org/x/mod/modfile"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served"
)

// Progress reports the steps of a build (progress.Progress).
type Progress interface {
	Step(format string, args ...any)
	Timed(name string, fn func() error) error
}

// ProgramSet describes static binaries built from one module served by the
// Go module proxy, through a throw-away wrapper module that requires it.
type ProgramSet struct {
	Module  string // e.g. k8s.io/kubernetes
	Version string // e.g. v1.37.2
	// Replaces are replace directives: module path -> the right-hand side,
	// a version of the same module ("v0.26.13") or another module path and
	// a version ("github.com/fvbommel/util v0.0.0-...", oldreleases.go).
	Replaces map[string]string
	Requires map[string]string // module path -> version (require directives besides Module's)
	Programs map[string]string // binary name -> main package import path
	LDFlags  string
	Tags     string // go build -tags, e.g. "urfave_cli_no_docs netgo"; "" for none
	// CGO builds with cgo (CGO_ENABLED=1, the host's C compiler and
	// libraries): for programs that need a C library, such as CRI-O's
	// libseccomp. Off: static, without a C toolchain.
	CGO bool
	// ModuleSums seeds the build's go.sum with Module's own go.sum, so the
	// dependencies are checked against the hashes Module's authors recorded
	// (some of CRI-O's pseudo-versions are not in the checksum database the
	// proxy serves).
	ModuleSums bool
	// KubernetesOpenAPI generates k8s.io/kubernetes's OpenAPI definitions,
	// which the module of a release before v1.24 lacks (openapi.go).
	KubernetesOpenAPI bool
}

func (s ProgramSet) key() string {
	parts := []string{s.Module, s.Version, s.LDFlags}
	for _, m := range slices.Sorted(maps.Keys(s.Replaces)) {
		parts = append(parts, "replace "+m+"="+s.Replaces[m])
	}
	for _, m := range slices.Sorted(maps.Keys(s.Requires)) {
		parts = append(parts, "require "+m+"="+s.Requires[m])
	}
	for _, n := range slices.Sorted(maps.Keys(s.Programs)) {
		parts = append(parts, "program "+n+"="+s.Programs[n])
	}
	if s.Tags != "" {
		// Only when set: the keys of the sets without tags stay as they were.
		parts = append(parts, "tags "+s.Tags)
	}
	if s.CGO {
		parts = append(parts, "cgo")
	}
	if s.ModuleSums {
		parts = append(parts, "module sums")
	}
	if s.KubernetesOpenAPI {
		parts = append(parts, "kubernetes openapi")
	}
	return cache.Key(parts...)
}

// Key is the set's cache key, which changes with every input of the build
// (for the key of an image that holds the binaries).
func (s ProgramSet) Key() string { return s.key() }

// dirName names the cache entry, e.g. k8s.io_kubernetes-v1.37.2-<key>.
func (s ProgramSet) dirName() string {
	return strings.ReplaceAll(s.Module, "/", "_") + "-" + s.Version + "-" + s.key()
}

// oneBuild reports whether the set's programs can come from a single
// go build -o <dir>/: more than one program, each named as go build names
// a main package's binary (the last element of its import path; a major
// version suffix such as /v3 would not be, so such sets build one by one).
func (s ProgramSet) oneBuild() (names, pkgs []string, ok bool) {
	if len(s.Programs) < 2 {
		return nil, nil, false
	}
	for _, n := range slices.Sorted(maps.Keys(s.Programs)) {
		pkg := s.Programs[n]
		if path.Base(pkg) != n || majorSuffix.MatchString(n) {
			return nil, nil, false
		}
		names, pkgs = append(names, n), append(pkgs, pkg)
	}
	return names, pkgs, true
}

var majorSuffix = regexp.MustCompile(`^v[0-9]+$`)

// buildArgs are the arguments of go build before -o and the packages.
func (s ProgramSet) buildArgs() []string {
	args := []string{"build", "-trimpath", "-ldflags", s.LDFlags}
	if s.Tags != "" {
		args = append(args, "-tags", s.Tags)
	}
	return args
}

// Env is the environment of every build: static, reproducible, no
// toolchain download, no workspace of the caller's; the compiler collects
// garbage less often (GOGC=200 unless the caller set GOGC), which saves
// CPU time on the large Kubernetes packages and changes no output.
func Env() []string {
	return env(false)
}

// env is Env, with cgo when cgo is set.
func env(cgo bool) []string {
	cgoEnabled := "CGO_ENABLED=0"
	if cgo {
		cgoEnabled = "CGO_ENABLED=1"
	}
	env := append(os.Environ(), cgoEnabled, "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	if os.Getenv("GOGC") == "" {
		env = append(env, "GOGC=200")
	}
	return env
}

// Build builds the set into <cache>/bin/<module-base>-<version>-<key>/
// and returns that directory; a complete earlier build is reused.
func Build(ctx context.Context, p Progress, s ProgramSet) (string, error) {
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cacheDir, "bin", s.dirName())
	if cache.Complete(dst) {
		p.Step("%s %s binaries: cached (%s)", s.Module, s.Version, dst)
		return dst, nil
	}
	// One build of a set at a time: the source directory is shared too.
	unlock, err := cache.Lock(ctx, dst, p.Step)
	if err != nil {
		return "", err
	}
	defer unlock()
	if cache.Complete(dst) {
		p.Step("%s %s binaries: built meanwhile by another process (%s)", s.Module, s.Version, dst)
		return dst, nil
	}
	src := filepath.Join(cacheDir, "src", s.dirName())
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	var gomod strings.Builder
	fmt.Fprintf(&gomod, "module skewproof.local/build\n\ngo 1.21\n\nrequire %s %s\n", s.Module, s.Version)
	if len(s.Requires) > 0 {
		gomod.WriteString("\nrequire (\n")
		for _, m := range slices.Sorted(maps.Keys(s.Requires)) {
			fmt.Fprintf(&gomod, "\t%s %s\n", m, s.Requires[m])
		}
		gomod.WriteString(")\n")
	}
	if s.KubernetesOpenAPI {
		// The module's files, linked, with the generated definitions added
		// (openapi.go): Go takes no overlay of files in the module cache.
		kdir, err := ModuleDir(ctx, s.Module, s.Version)
		if err != nil {
			return "", err
		}
		if err := linkTree(kdir, filepath.Join(src, openAPITree)); err != nil {
			return "", fmt.Errorf("linking %s %s into the build: %w", s.Module, s.Version, err)
		}
		fmt.Fprintf(&gomod, "\nreplace %s => ./%s\n", s.Module, openAPITree)
	}
	if len(s.Replaces) > 0 {
		gomod.WriteString("\nreplace (\n")
		for _, m := range slices.Sorted(maps.Keys(s.Replaces)) {
			fmt.Fprintf(&gomod, "\t%s => %s\n", m, replaceTarget(m, s.Replaces[m]))
		}
		gomod.WriteString(")\n")
	}
	var tools strings.Builder
	tools.WriteString("//go:build tools\n\npackage tools\n\nimport (\n")
	for _, n := range slices.Sorted(maps.Keys(s.Programs)) {
		fmt.Fprintf(&tools, "\t_ %q\n", s.Programs[n])
	}
	tools.WriteString(")\n")
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod.String()), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools.String()), 0o644); err != nil {
		return "", err
	}
	if s.ModuleSums {
		if err := seedSums(ctx, src, s.Module, s.Version); err != nil {
			return "", err
		}
	}
	buildEnv := env(s.CGO)
	if err := p.Timed(fmt.Sprintf("resolving %s %s (go mod tidy)", s.Module, s.Version), func() error {
		// -e: tools.go imports main packages, which tidy reports but resolves.
		return command.Run(ctx, src, buildEnv, "go", "mod", "tidy", "-e")
	}); err != nil {
		return "", fmt.Errorf("resolving %s %s through the Go module proxy: %w", s.Module, s.Version, err)
	}
	if s.KubernetesOpenAPI {
		if err := p.Timed(fmt.Sprintf("generating the OpenAPI definitions of %s %s (openapi-gen, as its make did; the module has none before v1.24)", s.Module, s.Version), func() error {
			return generateOpenAPI(ctx, src, filepath.Join(src, openAPITree), buildEnv, s.Replaces)
		}); err != nil {
			return "", fmt.Errorf("%s %s: %w", s.Module, s.Version, err)
		}
	}
	err = cache.FillLocked(dst, func(tmp string) error {
		if names, pkgs, ok := s.oneBuild(); ok {
			// One go build for the whole set: the linker (one core each)
			// runs beside the compiler instead of after it, binary by binary.
			return p.Timed(fmt.Sprintf("go build %s (%s)", strings.Join(names, ", "), s.Version), func() error {
				args := append(append(s.buildArgs(), "-o", tmp+string(filepath.Separator)), pkgs...)
				if err := command.Run(ctx, src, buildEnv, "go", args...); err != nil {
					return fmt.Errorf("building %s %s: %w", strings.Join(names, ", "), s.Version, err)
				}
				return nil
			})
		}
		for _, n := range slices.Sorted(maps.Keys(s.Programs)) {
			pkg := s.Programs[n]
			if err := p.Timed(fmt.Sprintf("go build %s (%s)", n, s.Version), func() error {
				return command.Run(ctx, src, buildEnv, "go", append(s.buildArgs(), "-o", filepath.Join(tmp, n), pkg)...)
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

// seedSums writes module@version's own go.sum as the go.sum of the build
// module in src.
func seedSums(ctx context.Context, src, module, version string) error {
	dir, err := ModuleDir(ctx, module, version)
	if err != nil {
		return err
	}
	sums, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		return fmt.Errorf("%s %s: %w", module, version, err)
	}
	return os.WriteFile(filepath.Join(src, "go.sum"), sums, 0o644)
}

// kubernetesGoMod reads k8s.io/kubernetes's go.mod at version v from the
// module cache (downloading it) and returns it with the module's directory.
func kubernetesGoMod(ctx context.Context, v string) (gomod []byte, dir string, err error) {
	dir, err = ModuleDir(ctx, "k8s.io/kubernetes", v)
	if err != nil {
		return nil, "", err
	}
	gomod, err = os.ReadFile(filepath.Join(dir, "go.mod"))
	return gomod, dir, err
}

// kubernetesStaging reads raw, k8s.io/kubernetes's go.mod at version v,
// and returns a replace of every staging
// module by its published v0.Y.Z release, since the module zip holds no
// staging/ directory, and a require at that release of every staging module
// k8s.io/kubernetes requires (at v0.0.0 in its go.mod). With those
// requires, the build records the staging modules at the release, as a
// module that depends on k8s.io/kubernetes at that release does (the
// project's own go.mod): with -trimpath both compile those packages under
// the same cache keys, so the Go build cache shares them.
func kubernetesStaging(raw []byte, v string) (replaces, requires map[string]string, err error) {
	replaces, requires, err = stagingDirectives(raw, v)
	if err != nil {
		return nil, nil, fmt.Errorf("k8s.io/kubernetes %s: %w", v, err)
	}
	if len(replaces) == 0 {
		return nil, nil, fmt.Errorf("k8s.io/kubernetes %s: no staging replace directives found in go.mod", v)
	}
	return replaces, requires, nil
}

// stagingDirectives parses the go.mod of k8s.io/kubernetes at version v
// (see kubernetesStaging): its staging modules (replaced by ./staging/...)
// each map to their release v0.Y.Z, in replaces; those it also requires
// (at v0.0.0), in requires.
func stagingDirectives(gomod []byte, v string) (replaces, requires map[string]string, err error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, nil, err
	}
	staging := "v0." + strings.SplitN(release.BareVersion(v), ".", 2)[1]
	replaces, requires = map[string]string{}, map[string]string{}
	for _, r := range f.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			replaces[r.Old.Path] = staging
		}
	}
	for _, r := range f.Require {
		if _, ok := replaces[r.Mod.Path]; ok && r.Mod.Version == "v0.0.0" {
			requires[r.Mod.Path] = staging
		}
	}
	return replaces, requires, nil
}

// moduleServed asks the Go module proxy whether it serves module@version
// and the checksum database knows it. Tests replace it.
var moduleServed = served.ModuleVerifiable

// nearestServedStaging takes each staging module the build requires at a
// release the proxy refuses (k8s.io/kube-proxy v0.26.15, for one: the
// proxy's 403) or the checksum database does not know
// (k8s.io/legacy-cloud-providers v0.27.16) at the nearest lower patch of the same minor that it serves,
// in requires and replaces, and returns one line per module taken so, with
// the reason. A staging module's patches of one minor differ in fixes, not
// in API types or configuration, and the binaries still report the
// release's own version (kubernetesLDFlags). A module with no served patch
// of its minor is an error naming it. When the proxy cannot be asked, the
// release stays as it is, and go mod tidy says what it refuses.
func nearestServedStaging(ctx context.Context, replaces, requires map[string]string) ([]string, error) {
	var lines []string
	for _, m := range slices.Sorted(maps.Keys(requires)) {
		v := requires[m]
		ok, err := moduleServed(ctx, m, v)
		if err != nil || ok {
			continue
		}
		sv, err := version.NewVersion(strings.TrimPrefix(v, "v"))
		if err != nil {
			continue
		}
		found := ""
		for p := int(sv.Segments()[2]) - 1; p >= 0; p-- {
			c := fmt.Sprintf("v%d.%d.%d", sv.Segments()[0], sv.Segments()[1], p)
			if ok, err := moduleServed(ctx, m, c); err == nil && ok {
				found = c
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("the Go module proxy serves %s at no patch of v%d.%d up to %s", m, sv.Segments()[0], sv.Segments()[1], v)
		}
		requires[m], replaces[m] = found, found
		lines = append(lines, fmt.Sprintf("%s %s is not served by the Go module proxy (or not in its checksum database); taking %s, the nearest served patch of its minor", m, v, found))
	}
	return lines, nil
}

// ModuleDir downloads module@version through the Go module proxy (or finds it
// in the module cache) and returns its directory.
func ModuleDir(ctx context.Context, module, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "skewproof-moddl-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
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
	parts := strings.SplitN(release.BareVersion(v), ".", 3)
	var b strings.Builder
	b.WriteString("-s -w")
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean -X %s.buildDate=1970-01-01T00:00:00Z",
			pkg, "v"+release.BareVersion(v), pkg, parts[0], pkg, parts[1], pkg, pkg)
	}
	return b.String()
}

// ControlPlaneCommands are the commands of k8s.io/kubernetes a control-plane
// node image holds (the kubelet among them, for the workers of its release).
var ControlPlaneCommands = []string{"kubeadm", "kubectl", "kubelet", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

// KubernetesBinaries builds the named commands (kubelet, kubeadm, ...) of
// k8s.io/kubernetes at version v and returns the directory holding them.
// The kubelet alone comes from the set of ControlPlaneCommands of the same
// release when that set is built, or being built by another build, which it
// waits for (kubeletFromControlPlane).
func KubernetesBinaries(ctx context.Context, p Progress, v string, names ...string) (string, error) {
	raw, kdir, err := kubernetesGoMod(ctx, "v"+release.BareVersion(v))
	if err != nil {
		return "", err
	}
	reps, reqs, err := kubernetesStaging(raw, "v"+release.BareVersion(v))
	if err != nil {
		return "", err
	}
	fixes, err := dependencyFixes(raw)
	if err != nil {
		return "", fmt.Errorf("k8s.io/kubernetes v%s: %w", release.BareVersion(v), err)
	}
	for _, f := range fixes {
		reps[f.Module] = f.replace()
		p.Step("%s", f.describe("v"+release.BareVersion(v)))
	}
	subs, err := nearestServedStaging(ctx, reps, reqs)
	if err != nil {
		return "", fmt.Errorf("k8s.io/kubernetes v%s: %w", release.BareVersion(v), err)
	}
	for _, l := range subs {
		p.Step("k8s.io/kubernetes v%s: %s", release.BareVersion(v), l)
	}
	set := func(names []string) ProgramSet {
		progs := map[string]string{}
		for _, n := range names {
			progs[n] = "k8s.io/kubernetes/cmd/" + n
		}
		return ProgramSet{
			Module:   "k8s.io/kubernetes",
			Version:  "v" + release.BareVersion(v),
			Replaces: reps,
			Requires: reqs,
			Programs: progs,
			LDFlags:  kubernetesLDFlags(v),
			// Only kube-apiserver imports the definitions: a kubelet-only set
			// keeps its key and build.
			KubernetesOpenAPI: slices.Contains(names, "kube-apiserver") && needsOpenAPI(kdir),
		}
	}
	if slices.Equal(names, []string{"kubelet"}) {
		if dir, ok, err := kubeletFromControlPlane(ctx, p, set(ControlPlaneCommands)); err != nil || ok {
			return dir, err
		}
	}
	return Build(ctx, p, set(names))
}

// kubeletFromControlPlane returns the directory of full, a release's set of
// ControlPlaneCommands, when it is built; while another build holds it, it
// waits for that build first. A kubelet of a release some other cluster
// runs as its control plane (the history preset's trailing kubelets: 1.22,
// 1.24, 1.29, 1.30) is then linked once, from the same module, version and
// flags, instead of compiled again on its own: before v1.24 the set compiles
// k8s.io/kubernetes from a tree with the OpenAPI definitions added, whose
// packages the Go build cache cannot share with a kubelet-only build. ok is
// false when the set is neither built nor being built.
func kubeletFromControlPlane(ctx context.Context, p Progress, full ProgramSet) (dir string, ok bool, err error) {
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return "", false, err
	}
	dst := filepath.Join(cacheDir, "bin", full.dirName())
	if !cache.Complete(dst) && cache.Held(dst) {
		p.Step("kubelet %s: waiting for the build of the control-plane commands of the same release, which has it", full.Version)
		unlock, err := cache.Lock(ctx, dst, p.Step)
		if err != nil {
			return "", false, err
		}
		unlock()
	}
	if !cache.Complete(dst) {
		return "", false, nil
	}
	p.Step("kubelet %s: from the control-plane commands of the same release (%s)", full.Version, dst)
	return dst, true, nil
}
