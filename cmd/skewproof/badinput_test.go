package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/skew/served"
)

// badInput is one row of docs/reliability.md's "Bad input" table: a command
// line (with {fx} standing for the fixture directory), the environment it
// runs in, the exit status and a part of the one line it must print.
type badInput struct {
	name string
	args []string
	env  map[string]string // {fx} is replaced in the values too
	code int
	want string
	// skip, when it returns a reason, skips the row (e.g. running as root).
	skip func() string
}

// badInputRows is the table. Every row must exit non-zero with one line on
// stderr containing want, nothing on stdout, and create nothing.
func badInputRows() []badInput {
	const nothing = "{fx}/kubeconfig-nothing"
	stopped := map[string]string{"DOCKER_HOST": "unix:///nonexistent.sock"}
	missing := map[string]string{"PATH": "{fx}/empty-path"}
	suiteBin := "{fx}/skewproof-e2e.test"
	small := map[string]string{"SKEWPROOF_CACHE_DIR": "{fx}/small/cache", "GOCACHE": "{fx}/small/go-build"}
	return []badInput{
		// The command line itself.
		{name: "unknown-flag", args: []string{"run", "--no-such-flag"}, code: 2, want: "skewproof run: unknown flag: --no-such-flag; run 'skewproof run --help'"},
		{name: "unknown-command", args: []string{"frobnicate"}, code: 2, want: `skewproof: unknown command "frobnicate"; run 'skewproof --help' for the list`},
		{name: "unknown-subcommand", args: []string{"cluster", "sideways"}, code: 2, want: `skewproof cluster: unknown command "sideways"; subcommands: down, list, up`},
		{name: "flag-missing-value", args: []string{"run", "--apiserver"}, code: 2, want: "flag needs an argument: --apiserver; run 'skewproof run --help'"},
		{name: "single-dash-flag", args: []string{"run", "-apiserver", "1.37.2"}, code: 2, want: "long flags take two dashes"},
		{name: "stray-argument", args: []string{"run", "--apiserver", "1.37.2", "extra"}, code: 2, want: `unexpected argument "extra"`},
		{name: "cluster-down-positional-name", args: []string{"cluster", "down", "measure"}, code: 2, want: `skewproof cluster down: unexpected argument "measure"; name the cluster with --name`},
		{name: "run-no-target", args: []string{"run"}, code: 2, want: "give --apiserver and --kubelets to create a cluster, or --kubeconfig to use an existing one"},
		{name: "remove-images-unknown", args: []string{"run", "--apiserver", "1.37.2", "--remove-images=sometimes"}, code: 2, want: "--remove-images sometimes: give true, false or auto"},
		{name: "remove-images-with-keep", args: []string{"run", "--apiserver", "1.37.2", "--keep", "--remove-images"}, code: 2, want: "with --keep the cluster stays"},
		// Versions.
		{name: "version-malformed", args: []string{"run", "--apiserver", "1.x"}, code: 2, want: "--apiserver:"},
		{name: "kubelet-version-malformed", args: []string{"run", "--apiserver", "1.37.2", "--kubelets", "1.34"}, code: 2, want: "--kubelets:"},
		{name: "version-unserved", args: []string{"run", "--apiserver", "1.20.99"}, code: 2, want: "1.20.99 is not served"},
		{name: "kubelet-newer", args: []string{"run", "--apiserver", "1.36.3", "--kubelets", "1.37.2"}, code: 2, want: "newer"},
		{name: "skew-beyond-policy", args: []string{"run", "--apiserver", "1.37.2", "--kubelets", "1.30.4"}, code: 2, want: "skew"},
		{name: "matrix-reversed", args: []string{"run", "--matrix", "1.37..1.36"}, code: 2, want: "--matrix:"},
		{name: "matrix-malformed", args: []string{"run", "--matrix", "1.x..1.37"}, code: 2, want: "--matrix:"},
		{name: "matrix-with-kubeconfig", args: []string{"run", "--matrix", "1.36..1.37", "--kubeconfig", nothing}, code: 2, want: "--matrix plans its own clusters; leave out --kubeconfig"},
		{name: "matrix-parallel-word", args: []string{"run", "--matrix", "1.36..1.37", "--matrix-parallel", "two"}, code: 2, want: "--matrix-parallel two: give a number of clusters, at least 1, or auto"},
		{name: "matrix-parallel-99", args: []string{"run", "--matrix", "1.36..1.37", "--matrix-parallel", "99"}, code: 2, want: "--matrix-parallel 99: 99 clusters of"},
		{name: "matrix-runtimes-alone", args: []string{"run", "--apiserver", "1.37.2", "--matrix-runtimes", "+crun"}, code: 2, want: "--matrix-runtimes fans the clusters of --matrix out"},
		{name: "matrix-runtimes-unknown", args: []string{"run", "--matrix", "1.36..1.37", "--matrix-runtimes", "cri-dockerd+crun"}, code: 2, want: `--matrix-runtimes "cri-dockerd+crun": unknown CRI runtime "cri-dockerd" (known: containerd, containerd2, crio)`},
		{name: "report-diff-one-runtime", args: []string{"report", "diff", nothing, nothing, "--old-runtime", "runc"}, code: 2, want: "give both --old-runtime and --new-runtime"},
		{name: "simulate-malformed-version", args: []string{"simulate", "--apiserver", "1.37"}, code: 2, want: `skewproof simulate: --apiserver: malformed version "1.37"`},
		{name: "matrix-format-bogus", args: []string{"matrix", "--apiserver", "1.36..1.37", "--format", "bogus"}, code: 2, want: `unknown --format "bogus"; use text, json or github`},
		{name: "images-build-malformed", args: []string{"images", "build", "--kubernetes", "1.x"}, code: 2, want: "--apiserver:"},
		// Other flags of run.
		{name: "flake-attempts-0", args: []string{"run", "--apiserver", "1.37.2", "--flake-attempts", "0"}, code: 2, want: "--flake-attempts must be at least 1"},
		{name: "unknown-suite", args: []string{"run", "--kubeconfig", nothing, "--suite-binary", suiteBin, "--suites", "seccomp,bogus"}, code: 2, want: `--suites: the suite binary has no suite "bogus" (it has: apparmor, profiles, seccomp)`},
		{name: "name-upper-case", args: []string{"run", "--name", "Bad", "--apiserver", "1.37.2"}, code: 2, want: `--name "Bad": use lower-case letters, digits and '-'`},
		{name: "name-too-long", args: []string{"run", "--name", strings.Repeat("a", 41), "--apiserver", "1.37.2"}, code: 2, want: "--name must be 1-40 characters"},
		{name: "timeout-0", args: []string{"run", "--kubeconfig", nothing, "--timeout", "0s"}, code: 2, want: "--timeout must be positive"},
		{name: "timeout-malformed", args: []string{"run", "--kubeconfig", nothing, "--timeout", "soon"}, code: 2, want: `invalid argument "soon" for "--timeout"`},
		{name: "feature-gates-malformed", args: []string{"run", "--apiserver", "1.37.2", "--feature-gates", "AppArmor"}, code: 2, want: "--feature-gates:"},
		{name: "rbac-bad-namespace", args: []string{"rbac", "--namespace", "Bad_NS"}, code: 2, want: `--namespace "Bad_NS" is no namespace name`},
		// Kubeconfigs.
		{name: "kubeconfig-missing", args: []string{"run", "--kubeconfig", "{fx}/absent"}, code: 2, want: "no such file or directory; give the kubeconfig file of an existing cluster"},
		{name: "kubeconfig-malformed", args: []string{"run", "--kubeconfig", "{fx}/kubeconfig-malformed", "--suite-binary", suiteBin}, code: 2, want: "did not find expected node content; give the kubeconfig file of an existing cluster"},
		{name: "kubeconfig-empty", args: []string{"run", "--kubeconfig", "{fx}/kubeconfig-empty", "--suite-binary", suiteBin}, code: 2, want: "names no cluster (no clusters, users or current-context); give the kubeconfig file"},
		{name: "kubeconfig-directory", args: []string{"run", "--kubeconfig", "{fx}", "--suite-binary", suiteBin}, code: 2, want: "is a directory; give the kubeconfig file of an existing cluster"},
		{name: "kubeconfig-unreadable", args: []string{"run", "--kubeconfig", "{fx}/kubeconfig-unreadable", "--suite-binary", suiteBin}, code: 2, want: "permission denied",
			skip: func() string {
				if os.Geteuid() == 0 {
					return "running as root, which reads a mode 000 file (a directory in its place: row kubeconfig-directory)"
				}
				return ""
			}},
		{name: "kubeconfig-unreachable", args: []string{"run", "--kubeconfig", nothing, "--suite-binary", suiteBin}, code: 1, want: "connection refused); check that the cluster runs and the kubeconfig's server address"},
		{name: "kubeconfig-forbidden", args: []string{"run", "--kubeconfig", "{fx}/kubeconfig-forbidden", "--suite-binary", suiteBin}, code: 1, want: `cannot list resource "nodes" in API group "" at the cluster scope; grant the run its permissions: skewproof rbac | kubectl apply -f -`},
		{name: "profiles-status-unreachable", args: []string{"profiles", "status", "--kubeconfig", nothing}, code: 1, want: "cannot reach the API server of {fx}/kubeconfig-nothing"},
		{name: "profiles-install-unreachable", args: []string{"profiles", "install", "--kubeconfig", nothing}, code: 1, want: "connection refused); check that the cluster runs and the kubeconfig's server address"},
		{name: "profiles-teardown-unreachable", args: []string{"profiles", "teardown", "--kubeconfig", nothing}, code: 1, want: "connection refused); check that the cluster runs and the kubeconfig's server address"},
		{name: "profiles-install-forbidden", args: []string{"profiles", "install", "--kubeconfig", "{fx}/kubeconfig-forbidden"}, code: 1, want: `cannot list resource "pods" in API group "" at the cluster scope; grant the permissions 'skewproof rbac --profiles-namespace skewproof-profiles' prints`},
		{name: "profiles-teardown-forbidden", args: []string{"profiles", "teardown", "--kubeconfig", "{fx}/kubeconfig-forbidden"}, code: 1, want: "(and 4 more errors like it); grant the permissions 'skewproof rbac --profiles-namespace skewproof-profiles' prints"},
		{name: "profiles-status-kubeconfig-malformed", args: []string{"profiles", "status", "--kubeconfig", "{fx}/kubeconfig-malformed"}, code: 2, want: "give the kubeconfig file of an existing cluster"},
		{name: "profiles-status-forbidden", args: []string{"profiles", "status", "--kubeconfig", "{fx}/kubeconfig-forbidden"}, code: 1, want: `cannot list resource "seccompprofiles" in API group "profiles.skewproof.io" at the cluster scope; grant the permissions 'skewproof rbac --profiles-namespace skewproof-profiles' prints`},
		{name: "profiles-install-no-kubeconfig", args: []string{"profiles", "install"}, code: 2, want: "--kubeconfig is required"},
		{name: "profiles-install-profile-file", args: []string{"profiles", "install", "--kubeconfig", nothing, "{fx}/bad-seccomp.json"}, code: 2, want: "unexpected argument"},
		// JUnit files and run directories.
		{name: "rerun-failed-missing", args: []string{"run", "--kubeconfig", nothing, "--rerun-failed", "{fx}/absent.xml"}, code: 2, want: "no such file or directory; give the junit-<cluster>.xml of an earlier 'skewproof run'"},
		{name: "rerun-failed-broken-xml", args: []string{"run", "--kubeconfig", nothing, "--rerun-failed", "{fx}/broken.xml"}, code: 2, want: "XML syntax error on line 1: unexpected EOF; give the junit-<cluster>.xml"},
		{name: "rerun-failed-no-failure", args: []string{"run", "--kubeconfig", nothing, "--rerun-failed", "{fx}/passed.xml"}, code: 2, want: "no failed or flaky spec in {fx}/passed.xml: nothing to rerun"},
		{name: "report-missing-dir", args: []string{"report", "{fx}/absent", "--out", "report"}, code: 1, want: "absent does not exist; give the --junit-dir of a 'skewproof run'"},
		{name: "report-no-junit", args: []string{"report", "{fx}/empty-dir", "--out", "report"}, code: 1, want: "empty-dir holds no junit*.xml; give the --junit-dir"},
		{name: "report-broken-xml", args: []string{"report", "{fx}/broken.xml", "--out", "report"}, code: 1, want: "broken.xml is not a readable JUnit file (XML syntax error on line 1: unexpected EOF); re-run 'skewproof run' for it or leave it out"},
		{name: "report-no-out", args: []string{"report", "{fx}/passed.xml"}, code: 2, want: "--out is required"},
		{name: "report-diff-one-argument", args: []string{"report", "diff", "{fx}/passed.xml"}, code: 2, want: "give two runs or reports, OLD and NEW (directories or JUnit files); got 1"},
		{name: "bundle-verify-missing", args: []string{"bundle", "verify", "{fx}/absent.tar.gz"}, code: 1, want: "absent.tar.gz: no such file or directory; give the FILE.tar.gz 'skewproof bundle' wrote"},
		{name: "bundle-verify-corrupt", args: []string{"bundle", "verify", "{fx}/corrupt.tar.gz"}, code: 1, want: "the file is damaged or no bundle: write it again"},
		// Docker.
		{name: "cluster-down-docker-stopped", args: []string{"cluster", "down", "--name", "badinput"}, env: stopped, code: 1, want: "the Docker daemon is not reachable (Cannot connect to the Docker daemon at unix:///nonexistent.sock. Is the docker daemon running?); start it"},
		{name: "cluster-list-docker-missing", args: []string{"cluster", "list"}, env: missing, code: 1, want: "the docker client is not installed (no docker in PATH); install Docker"},
		{name: "run-docker-missing", args: []string{"run", "--name", "badinput", "--apiserver", "1.37.2", "--suite-binary", suiteBin}, env: missing, code: 1, want: "the docker client is not installed"},
		{name: "run-docker-stopped", args: []string{"run", "--name", "badinput", "--apiserver", "1.37.2", "--suite-binary", suiteBin}, env: stopped, code: 1, want: "the Docker daemon is not reachable (Cannot connect to the Docker daemon at unix:///nonexistent.sock. Is the docker daemon running?); start it"},
		{name: "images-build-docker-missing", args: []string{"images", "build", "--kubernetes", "1.37.2"}, env: missing, code: 1, want: "the docker client is not installed (no docker in PATH); install Docker"},
		// Disk: the caches on a 64 MiB file system, and a control plane
		// (1.35.4) whose image and binaries must be built.
		{name: "run-disk-too-small", args: []string{"run", "--name", "badinput", "--apiserver", "1.35.4", "--apparmor-node", "off", "--suite-binary", suiteBin}, env: small, code: 2,
			want: "compiling Kubernetes 1.35.4: about 6.0 GiB in {fx}/small/go-build (Go's build cache), which has 0.1 GiB free; free disk ('skewproof images prune --keep N', 'docker system prune') or give prebuilt --node-image", skip: needsSmallDisk},
		{name: "images-build-disk-too-small", args: []string{"images", "build", "--kubernetes", "1.35.4"}, env: small, code: 2,
			want: "skewproof images build: compiling Kubernetes 1.35.4: about 6.0 GiB in {fx}/small/go-build (Go's build cache), which has 0.1 GiB free", skip: needsSmallDisk},
		{name: "images-build-docker-stopped", args: []string{"images", "build", "--kubernetes", "1.37.2"}, env: stopped, code: 1, want: "the Docker daemon is not reachable (Cannot connect to the Docker daemon at unix:///nonexistent.sock. Is the docker daemon running?); start it"},
	}
}

// badInputFixtures writes the files the rows name into a new directory and
// starts the API server that forbids everything but /version.
func badInputFixtures(t *testing.T) string {
	t.Helper()
	fx := t.TempDir()
	srv := httptest.NewTLSServer(http.HandlerFunc(forbidAll))
	t.Cleanup(srv.Close)
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(fx, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("kubeconfig-nothing", fakeKubeconfig("https://127.0.0.1:1"), 0o600)
	write("kubeconfig-forbidden", fakeKubeconfig(srv.URL), 0o600)
	write("kubeconfig-malformed", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \n", 0o600)
	write("kubeconfig-empty", "apiVersion: v1\nkind: Config\n", 0o600)
	write("kubeconfig-unreadable", fakeKubeconfig("https://127.0.0.1:1"), 0o000)
	// A suite binary that declares the real one's suites (and runs nothing).
	decls, err := filepath.Abs("../../suites/e2e/testdata/declarations.json")
	if err != nil {
		t.Fatal(err)
	}
	write("skewproof-e2e.test", "#!/bin/sh\nif [ -n \"$SKEWPROOF_DECLARE\" ]; then cp "+decls+" \"$SKEWPROOF_DECLARE\"; exit 0; fi\nexit 1\n", 0o755)
	write("bad-seccomp.json", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [`, 0o644)
	write("broken.xml", `<testsuites><testsuite name="seccomp"><testcase name="x"><failure>`, 0o644)
	write("passed.xml", `<testsuites><testsuite name="seccomp" tests="1"><testcase name="[seccomp/api/types] x" classname="seccomp"></testcase></testsuite></testsuites>`, 0o644)
	write("corrupt.tar.gz", "\x1f\x8b\x08\x00this is not a gzip stream", 0o644)
	for _, d := range []string{"empty-dir", "empty-path", "small"} {
		if err := os.Mkdir(filepath.Join(fx, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A small file system for the disk rows: 64 MiB, holding the caches.
	if os.Geteuid() == 0 && exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", filepath.Join(fx, "small")).Run() == nil {
		t.Cleanup(func() { exec.Command("umount", filepath.Join(fx, "small")).Run() })
		for _, d := range []string{"small/cache", "small/go-build"} {
			if err := os.Mkdir(filepath.Join(fx, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// The served versions, as withServedCache wrote them.
		if path, err := served.CachePath(); err == nil {
			if b, err := os.ReadFile(path); err == nil {
				write(filepath.Join("small/cache", filepath.Base(path)), string(b), 0o644)
			}
		}
	}
	return fx
}

// fakeKubeconfig is a kubeconfig for server (TLS unverified) with a token.
func fakeKubeconfig(server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: skewproof-fake-token
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`, server)
}

// forbidAll answers /version like kube-apiserver 1.37.2 and every other
// request as an API server answers a ServiceAccount without the permission:
// 403 with the verb and resource.
func forbidAll(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/version" {
		json.NewEncoder(w).Encode(map[string]string{"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource, group := parts[len(parts)-1], ""
	if parts[0] == "apis" && len(parts) > 1 {
		group = parts[1]
	}
	verb := map[string]string{"GET": "list", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[r.Method]
	msg := fmt.Sprintf(`%s is forbidden: User "system:serviceaccount:skewproof:skewproof" cannot %s resource %q in API group %q at the cluster scope`, resource, verb, resource, group)
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg,
		"reason": "Forbidden", "details": map[string]string{"kind": resource}, "code": 403})
}

// snapshot is every file and directory under the roots: path -> mode, size
// and content hash.
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				m[p] = "error: " + err.Error()
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			v := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
			if fi.Mode().IsRegular() {
				if b, err := os.ReadFile(p); err == nil {
					h := sha256.Sum256(b)
					v += " " + hex.EncodeToString(h[:8])
				}
			}
			m[p] = v
			return nil
		})
	}
	return m
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for p, v := range after {
		if w, ok := before[p]; !ok {
			d = append(d, "created "+p)
		} else if w != v {
			d = append(d, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		}
	}
	sort.Strings(d)
	return d
}

// captureRun runs the CLI with stdout and stderr (and the writers tests
// replace) captured into files of dir, and gives up after limit.
func captureRun(t *testing.T, dir string, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	outF, err := os.CreateTemp(dir, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.CreateTemp(dir, "stderr")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	oldOut, oldErr, oldBundle, oldOracle := os.Stdout, os.Stderr, bundleOut, oracleOut
	os.Stdout, os.Stderr, bundleOut, oracleOut = outF, errF, &buf, &buf
	done := make(chan int, 1)
	go func() { done <- run(args) }()
	select {
	case code = <-done:
	case <-time.After(limit):
		os.Stdout, os.Stderr = oldOut, oldErr
		t.Fatalf("%q still running after %v", args, limit)
	}
	os.Stdout, os.Stderr, bundleOut, oracleOut = oldOut, oldErr, oldBundle, oldOracle
	outF.Close()
	errF.Close()
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return code, string(o) + buf.String(), string(e)
}

// dockerReachable says whether the docker client reaches a daemon.
func dockerReachable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Run() == nil
}

// dockerObjects lists the containers and networks whose name holds name.
func dockerObjects(t *testing.T, name string) string {
	t.Helper()
	var all []string
	for _, args := range [][]string{
		{"ps", "-a", "--filter", "name=" + name, "--format", "{{.Names}}"},
		{"network", "ls", "--filter", "name=" + name, "--format", "{{.Name}}"},
	} {
		out, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			all = append(all, s)
		}
	}
	return strings.Join(all, "\n")
}

// TestBadInput: every bad input of docs/reliability.md's table exits non-zero
// with one line on stderr (the message and its remedy), prints nothing on
// stdout, and creates nothing: not in the working directory (where the
// default --junit-dir and the rows' --out go), $HOME (~/.kube), the cache
// directory, $TMPDIR or the fixtures, nor a docker container or network.
func TestBadInput(t *testing.T) {
	withServedCache(t)
	fx := badInputFixtures(t)
	capDir := t.TempDir()
	home, tmp, work := t.TempDir(), t.TempDir(), t.TempDir()
	cache := os.Getenv("SKEWPROOF_CACHE_DIR")
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Chdir(work)
	docker := dockerReachable()
	if docker {
		if s := dockerObjects(t, "badinput"); s != "" {
			t.Fatalf("docker objects named badinput exist before the test:\n%s", s)
		}
	}
	logRows := os.Getenv("SKEWPROOF_BADINPUT_LOG") != ""
	rows := badInputRows()
	names := map[string]bool{}
	for _, r := range rows {
		if names[r.name] {
			t.Fatalf("two rows named %s", r.name)
		}
		names[r.name] = true
		t.Run(r.name, func(t *testing.T) {
			if r.skip != nil {
				if why := r.skip(); why != "" {
					t.Skip(why)
				}
			}
			for k, v := range r.env {
				t.Setenv(k, strings.ReplaceAll(v, "{fx}", fx))
			}
			t.Setenv("TMPDIR", tmp)
			args := make([]string, len(r.args))
			for i, a := range r.args {
				args[i] = strings.ReplaceAll(a, "{fx}", fx)
			}
			before := snapshot(t, work, home, cache, tmp, fx)
			start := time.Now()
			code, stdout, stderr := captureRun(t, capDir, 90*time.Second, args...)
			took := time.Since(start)
			if logRows {
				t.Logf("ROW %s\t%s\t%d\t%.1fs\t%s", r.name, strings.ReplaceAll(strings.Join(r.args, " "), "{fx}", "FX"), code, took.Seconds(),
					strings.ReplaceAll(strings.TrimRight(stderr, "\n"), fx, "FX"))
			}
			if code == 0 || code != r.code {
				t.Errorf("exit %d, want %d", code, r.code)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.HasPrefix(stderr, "skewproof") {
				t.Errorf("stderr is not one line starting with the command:\n%s", stderr)
			}
			if want := strings.ReplaceAll(r.want, "{fx}", fx); !strings.Contains(stderr, want) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace on stderr:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty:\n%s", stdout)
			}
			if d := diffSnapshots(before, snapshot(t, work, home, cache, tmp, fx)); len(d) > 0 {
				t.Errorf("the run left changes behind:\n%s", strings.Join(d, "\n"))
			}
		})
	}
	if len(rows) < 30 {
		t.Errorf("%d rows; the table needs at least 30", len(rows))
	}
	if docker {
		if s := dockerObjects(t, "badinput"); s != "" {
			t.Errorf("docker objects left behind:\n%s", s)
		}
	}
}

// needsSmallDisk skips the disk rows where the small file system cannot be
// mounted (not root) or Docker does not answer (it is asked which images
// exist before the disk is weighed).
func needsSmallDisk() string {
	switch {
	case os.Geteuid() != 0:
		return "mounting the 64 MiB tmpfs needs root"
	case !dockerReachable():
		return "Docker does not answer"
	}
	return ""
}

// The table in docs/reliability.md and the test's rows are the same set:
// every documented row is tested, every tested row documented.
func TestBadInputTableMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/reliability.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "| ") || !strings.HasSuffix(l, "` |") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(l, " |"), " | ")
		doc[strings.Trim(cells[len(cells)-1], "`")] = true
	}
	rows := map[string]bool{}
	for _, r := range badInputRows() {
		rows[r.name] = true
		if !doc[r.name] {
			t.Errorf("row %s is not in docs/reliability.md's table", r.name)
		}
	}
	for n := range doc {
		if !rows[n] {
			t.Errorf("docs/reliability.md lists %s, which no test row covers", n)
		}
	}
}
