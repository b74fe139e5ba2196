package uml

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/owner"
)

// The kernel of an AppArmor node is built by skewproof from Debian's kernel
// source: UML before 6.13 cannot boot on hosts whose CPU has AMX (it moved
// the FP/vector state through ptrace in a fixed 2696-byte buffer; an AMX
// host's XSTATE is 11008 bytes: "ptrace set fp regs failed, errno = 14").
// 3f17fed21491 ("um: switch to regset API and depend on XSTATE", 6.13) fixed
// it. No Debian release for this host packages a UML kernel with the fix
// that runs here, so skewproof builds one, with its own configuration
// (kernel/skewproof-uml.config), once per source version and configuration.
const (
	// SourcePackage is Debian's kernel source package the kernel is built
	// from, SourceSuite the suite that has it.
	SourcePackage = "linux-source-7.3"
	SourceSuite   = "trixie-backports"
	// SourceVersion is the version tested; another version of the package
	// is used (and said) when the mirror no longer serves this one.
	SourceVersion = "7.3.4-1~bpo13+1"
	debianMirror  = "http://deb.debian.org/debian"
	// kernelBuilder is part of the cache key: bump it when the way the
	// kernel is built changes what it is.
	kernelBuilder = "1"
)

//go:embed kernel/skewproof-uml.config
var kernelConfig []byte

// configKey identifies the kernel configuration fragment, the source edits
// (kernelpatch.go) and the builder.
func configKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "uml-kernel-builder=%s\n", kernelBuilder)
	h.Write(kernelConfig)
	for _, e := range kernelEdits {
		fmt.Fprintf(h, "edit %s\n%s\n%s\n", e.file, e.old, e.new)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// kernelDir is the cache entry of the kernel built from source version v
// with this configuration.
func kernelDir(cacheDir, v string) string {
	safe := regexp.MustCompile(`[^A-Za-z0-9.+-]`).ReplaceAllString(v, "_")
	return filepath.Join(cacheDir, "uml", "kernel-"+safe+"-"+configKey())
}

// CachedKernel returns the kernel built with this configuration, preferring
// SourceVersion's; "" when none was built yet.
func CachedKernel(cacheDir string) string {
	if d := kernelDir(cacheDir, SourceVersion); cache.Complete(d) {
		return filepath.Join(d, "linux")
	}
	ms, _ := filepath.Glob(filepath.Join(cacheDir, "uml", "kernel-*-"+configKey()))
	sort.Strings(ms)
	for i := len(ms) - 1; i >= 0; i-- {
		if cache.Complete(ms[i]) {
			return filepath.Join(ms[i], "linux")
		}
	}
	return ""
}

// buildTools are the host commands a kernel build runs.
var buildTools = []string{"apt-get", "dpkg-deb", "tar", "xz", "make", "gcc", "flex", "bison", "bc"}

// BuildReady says what this host lacks to build the kernel (one line with
// the remedy); nil when nothing.
func BuildReady() error {
	var missing []string
	for _, t := range buildTools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if _, err := os.Stat("/usr/include/libelf.h"); err != nil {
		missing = append(missing, "libelf-dev")
	}
	if len(missing) > 0 {
		return fmt.Errorf("building the AppArmor node's kernel needs %s on this host: run 'sudo hack/setup-host.sh --uml' (or give a UML kernel with --uml-kernel)", strings.Join(missing, ", "))
	}
	return nil
}

// Kernel returns the UML kernel for AppArmor nodes: the cached build, or
// one built now from Debian's kernel source (several minutes, with progress
// lines through step). A build that fails returns one line saying why; its
// log is kept in cacheDir/uml/kernel-build.log.
func Kernel(ctx context.Context, cacheDir string, step func(string, ...any)) (string, error) {
	if k := CachedKernel(cacheDir); k != "" {
		step("AppArmor node kernel %s: cached", filepath.Base(filepath.Dir(k)))
		return k, nil
	}
	if err := BuildReady(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(cacheDir, "uml"), 0o755); err != nil {
		return "", err
	}
	// What a killed build left of its apt directory.
	owner.SweepDir(filepath.Join(cacheDir, "uml"), ".kernel-apt-")
	work, err := os.MkdirTemp(filepath.Join(cacheDir, "uml"), ".kernel-apt-"+owner.Token()+"-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()
	step("AppArmor node kernel: looking up %s in Debian %s", SourcePackage, SourceSuite)
	a := aptIn(work)
	version, err := a.candidate(ctx)
	if err != nil {
		return "", err
	}
	if version != SourceVersion {
		step("AppArmor node kernel: the mirror has %s %s, not the tested %s; building that", SourcePackage, version, SourceVersion)
	}
	dst := kernelDir(cacheDir, version)
	logFile := filepath.Join(cacheDir, "uml", "kernel-build.log")
	err = cache.AtomicDir(ctx, dst, step, func(tmp string) error {
		return buildKernel(ctx, a, version, tmp, logFile, step)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dst, "linux"), nil
}

// apt runs apt-get with a sources list and package lists of its own, so
// that the host's apt configuration is neither used nor changed.
type apt struct{ dir string }

func aptIn(dir string) apt { return apt{dir} }

func (a apt) run(ctx context.Context, dir string, args ...string) (string, error) {
	opts := []string{
		"-q", "-o", "Dir::Etc::sourcelist=" + filepath.Join(a.dir, "sources.list"),
		"-o", "Dir::Etc::sourceparts=-",
		"-o", "Dir::State::Lists=" + filepath.Join(a.dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "APT::Sandbox::User=root",
	}
	cmd := exec.CommandContext(ctx, args[0], append(opts, args[1:]...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return string(out), nil
}

// candidate updates the package lists from Debian's mirror and returns the
// version of SourcePackage to build: SourceVersion when served, else the
// candidate.
func (a apt) candidate(ctx context.Context) (string, error) {
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return "", err
		}
	}
	src := fmt.Sprintf("deb %s %s main\n", debianMirror, SourceSuite)
	if err := os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if _, err := a.run(ctx, a.dir, "apt-get", "update"); err != nil {
		return "", fmt.Errorf("fetching Debian's %s package lists for the AppArmor node's kernel source (is %s reachable?): %w", SourceSuite, debianMirror, err)
	}
	out, err := a.run(ctx, a.dir, "apt-cache", "madison", SourcePackage)
	if err != nil {
		return "", err
	}
	var versions []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "|"); len(f) >= 2 {
			versions = append(versions, strings.TrimSpace(f[1]))
		}
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("debian %s does not have %s (the AppArmor node's kernel source); give a UML kernel with --uml-kernel", SourceSuite, SourcePackage)
	}
	for _, v := range versions {
		if v == SourceVersion {
			return v, nil
		}
	}
	return versions[0], nil
}

// buildKernel fetches the source package, configures and compiles the
// kernel in dst/src and leaves dst/linux (and dst/config); the source tree
// is removed.
func buildKernel(ctx context.Context, a apt, version, dst, logFile string, step func(string, ...any)) error {
	start := time.Now()
	step("AppArmor node kernel: downloading %s %s", SourcePackage, version)
	if _, err := a.run(ctx, a.dir, "apt-get", "download", SourcePackage+"="+version); err != nil {
		return fmt.Errorf("downloading %s %s: %w", SourcePackage, version, err)
	}
	debs, _ := filepath.Glob(filepath.Join(a.dir, SourcePackage+"_*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("downloading %s %s: no package file in %s", SourcePackage, version, a.dir)
	}
	pkg := filepath.Join(a.dir, "pkg")
	if err := run(ctx, "", nil, "dpkg-deb", "-x", debs[0], pkg); err != nil {
		return err
	}
	_ = os.Remove(debs[0])
	tarballs, _ := filepath.Glob(filepath.Join(pkg, "usr/src/linux-source-*.tar.xz"))
	if len(tarballs) != 1 {
		return fmt.Errorf("%s %s holds no single usr/src/linux-source-*.tar.xz", SourcePackage, version)
	}
	src := filepath.Join(dst, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(src) }()
	step("AppArmor node kernel: unpacking the source")
	if err := run(ctx, "", nil, "tar", "-x", "-J", "--strip-components=1", "-C", src, "-f", tarballs[0]); err != nil {
		return err
	}
	_ = os.RemoveAll(pkg)
	if err := applyEdits(src, kernelEdits); err != nil {
		return fmt.Errorf("building the AppArmor node's kernel failed: %w", err)
	}

	log, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	fail := func(what string, err error) error {
		_ = log.Sync()
		return fmt.Errorf("building the AppArmor node's kernel failed (%s): %s; log: %s", what, firstError(logFile, err), logFile)
	}
	frag := filepath.Join(dst, "skewproof-uml.config")
	if err := os.WriteFile(frag, kernelConfig, 0o644); err != nil {
		return err
	}
	step("AppArmor node kernel: configuring (arch/um x86_64_defconfig + %s)", "skewproof-uml.config")
	for _, c := range [][]string{
		{"make", "ARCH=um", "x86_64_defconfig"},
		{"scripts/kconfig/merge_config.sh", "-m", ".config", frag},
		{"make", "ARCH=um", "olddefconfig"},
	} {
		if err := run(ctx, src, log, c[0], c[1:]...); err != nil {
			return fail("configuring", err)
		}
	}
	if err := checkConfig(filepath.Join(src, ".config"), kernelConfig); err != nil {
		return fmt.Errorf("building the AppArmor node's kernel failed (configuring): %v", err)
	}
	jobs := runtime.NumCPU()
	step("AppArmor node kernel: compiling with %d jobs (about %d files; a few minutes)", jobs, expectedObjects)
	var done atomic.Int64
	counter := &lineCounter{w: log, n: &done}
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	cdone := make(chan error, 1)
	cstart := time.Now()
	go func() {
		cdone <- run(ctx, src, counter, "make", "ARCH=um", fmt.Sprintf("-j%d", jobs), "linux")
	}()
	for waiting := true; waiting; {
		select {
		case err = <-cdone:
			waiting = false
		case <-tick.C:
			step("AppArmor node kernel: compiling, %d of about %d files after %s", done.Load(), expectedObjects, time.Since(cstart).Round(time.Second))
		}
	}
	if err != nil {
		return fail("compiling", err)
	}
	for _, f := range [][2]string{{"linux", "linux"}, {".config", "config"}} {
		if err := os.Rename(filepath.Join(src, f[0]), filepath.Join(dst, f[1])); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "source"), []byte(SourcePackage+" "+version+"\n"), 0o644); err != nil {
		return err
	}
	step("AppArmor node kernel: built from %s %s in %s (compile %s)", SourcePackage, version, time.Since(start).Round(time.Second), time.Since(cstart).Round(time.Second))
	return nil
}

// expectedObjects is about how many compile steps (kbuild's "CC" and such
// lines) the build of this configuration has: progress, not a check.
const expectedObjects = 1200

// lineCounter writes to w and counts kbuild's per-file lines.
type lineCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, l := range bytes.Split(p, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("  CC ")) || bytes.HasPrefix(l, []byte("  AS ")) {
			c.n.Add(1)
		}
	}
	return c.w.Write(p)
}

// checkConfig makes sure every setting of the fragment holds in the final
// .config (Kconfig drops what a dependency forbids, silently).
func checkConfig(dotConfig string, fragment []byte) error {
	b, err := os.ReadFile(dotConfig)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			have[k] = v
		}
	}
	var bad []string
	for _, l := range strings.Split(string(fragment), "\n") {
		l = strings.TrimSpace(l)
		if k, ok := strings.CutPrefix(l, "# "); ok && strings.HasSuffix(k, " is not set") {
			k = strings.TrimSuffix(k, " is not set")
			if v, set := have[k]; set && v != "n" {
				bad = append(bad, k+"="+v+" (wanted unset)")
			}
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "CONFIG_") {
			if have[k] != v {
				bad = append(bad, fmt.Sprintf("%s=%s (wanted %s)", k, orNone(have[k]), v))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the kernel source does not take %s", strings.Join(bad, ", "))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// run runs a command in dir, its output to log (or kept for the error when
// log is nil).
func run(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// make runs a tree of sub-makes and compilers: in a process group of
	// their own, an interrupt stops all of them (killing make alone leaves
	// kbuild's sub-makes compiling, and Wait waiting on their output).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	} else {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if log == nil {
			return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, lastLine(buf.String()))
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// firstError is the first compiler or make error line of a build log, or
// err's text.
func firstError(logFile string, err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err.Error()
	}
	if f, ferr := os.Open(logFile); ferr == nil {
		defer func() { _ = f.Close() }()
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			l := s.Text()
			if strings.Contains(l, "error:") || strings.Contains(l, "*** ") {
				return strings.TrimSpace(l)
			}
		}
	}
	return err.Error()
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(l[len(l)-1])
}

// KernelFeatures is what a UML kernel offers beyond the basics, read from
// its --help (the list of its command-line parameters).
type KernelFeatures struct {
	// Seccomp: user-space stubs that work through seccomp instead of
	// ptrace (seccomp=on; since 6.15), much cheaper system calls and
	// page faults.
	Seccomp bool
	// SMP: more than one virtual CPU (ncpus=N; needs Seccomp).
	SMP bool
}

// Features probes a UML kernel.
func Features(kernel string) KernelFeatures {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, kernel, "--help").CombinedOutput()
	return KernelFeatures{
		Seccomp: bytes.Contains(out, []byte("seccomp=<on")),
		SMP:     bytes.Contains(out, []byte("ncpus=")),
	}
}

// CPUs is the number of virtual CPUs a node gets: the host's, up to 4,
// when the kernel can.
func (f KernelFeatures) CPUs() int {
	if !f.Seccomp || !f.SMP {
		return 1
	}
	return min(runtime.NumCPU(), 4)
}

// Args are the kernel parameters that use the features, for a node of at
// most cpus virtual CPUs (0: CPUs()).
func (f KernelFeatures) Args(cpus int) []string {
	var a []string
	if f.Seccomp {
		a = append(a, "seccomp=on")
	}
	n := f.CPUs()
	if cpus > 0 {
		n = min(n, cpus)
	}
	if n > 1 {
		a = append(a, fmt.Sprintf("ncpus=%d", n))
	}
	return a
}
