package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/tartest"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

var (
	started  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	finished = time.Date(2026, 3, 1, 10, 42, 17, 500_000_000, time.UTC)
)

func boolp(b bool) *bool { return &b }

// seccompResults and apparmorResults hold every verdict: 3 pass, 1
// deviation, 1 fail, 2 skip.
var seccompResults = []reports.Result{
	{Name: "[seccomp/api/types] fields accepted", ID: "seccomp/api/types", APIServer: "1.37.2", Verdict: skew.Pass,
		Observed: "accepted", Expected: "accepted", Duration: 1500 * time.Millisecond},
	{Name: "[seccomp/kubelet/enforce] enforced [node:t-worker]", ID: "seccomp/kubelet/enforce", Node: "t-worker",
		Kubelet: "1.34.4", APIServer: "1.37.2", Verdict: skew.Deviation, Observed: "Seccomp: 2", Expected: "Seccomp: 2",
		KEP: "seccomp GA", Outcome: "upstream phase", Duration: 3 * time.Second},
	{Name: "[seccomp/failure/row-4] localhost missing [node:t-worker]", ID: "seccomp/failure/row-4", Node: "t-worker",
		Kubelet: "1.34.4", Verdict: skew.Fail, Failure: "container ran\nwant CreateContainerError", Duration: time.Second},
	{Name: "[seccomp/failure/row-1] runtime [node:t-worker]", ID: "seccomp/failure/row-1", Node: "t-worker",
		Kubelet: "1.34.4", Verdict: skew.Skip, Reason: "no docker access"},
}

var apparmorResults = []reports.Result{
	{Name: "[apparmor/api/types] fields accepted", ID: "apparmor/api/types", APIServer: "1.37.2", Verdict: skew.Pass},
	{Name: "[apparmor/kubelet/enforce] enforced [node:t-worker2]", ID: "apparmor/kubelet/enforce", Node: "t-worker2",
		Kubelet: "1.37.2", Verdict: skew.Pass, Observed: "skewproof-deny-write (enforce)"},
	{Name: "[apparmor/kubelet/enforce] enforced [node:t-worker]", ID: "apparmor/kubelet/enforce", Node: "t-worker",
		Kubelet: "1.34.4", Verdict: skew.Skip, Reason: "host has no AppArmor"},
}

func sampleRecord() reports.Record {
	return reports.Record{
		Command:    []string{"skewproof", "run", "--apiserver", "1.37.2", "--kubelets", "1.34.4,1.37.2", "--label-filter", "smoke && !slow", "--junit-dir", "/tmp/run dir", "--focus", "it's"},
		Skewproof:  "v0.3.0",
		Mode:       "new-cluster",
		Cluster:    "t",
		APIServer:  "1.37.2",
		Host:       &reports.HostRecord{Kernel: "6.1.0-18-amd64", Seccomp: true, AppArmor: false, CgroupVersion: 2},
		NodeAccess: "docker",
		Nodes: []reports.NodeRecord{
			{Name: "t-control-plane", ControlPlane: true, Kubelet: "v1.37.2", ContainerRuntime: "containerd://2.1.3", KernelVersion: "6.1.0-18-amd64", OSImage: "Debian GNU/Linux 12", Architecture: "amd64"},
			{Name: "t-worker", Kubelet: "v1.34.4", ContainerRuntime: "containerd://2.1.3", KernelVersion: "6.1.0-18-amd64", OSImage: "Debian GNU/Linux 12", Architecture: "amd64"},
			{Name: "t-worker2", Kubelet: "v1.37.2", ContainerRuntime: "containerd://2.1.3", KernelVersion: "6.12.0-uml", OSImage: "Debian GNU/Linux 12", Architecture: "amd64", AppArmor: boolp(true)},
		},
		Suites:   []string{"seccomp", "apparmor"},
		Started:  started,
		Finished: finished,
		JUnit:    "junit-t.xml",
		Logs:     []string{"seccomp-t.log", "apparmor-t.part-*.log"},
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runDir writes a synthetic run directory: two JUnit files of cluster t,
// the run record, the run's logs and a log of another run.
func runDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-t.xml"),
		reports.Suite{Name: "seccomp", Cluster: "t", Timestamp: started, Results: seccompResults}); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteJUnitFile(filepath.Join(dir, "junit-t.apparmor.xml"),
		reports.Suite{Name: "apparmor", Cluster: "t", Timestamp: started, Results: apparmorResults}); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteRecord(dir, sampleRecord()); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "seccomp-t.log"), "seccomp suite log line 1\nline 2\n")
	write(t, filepath.Join(dir, "apparmor-t.part-api.log"), "apparmor api part, no final newline")
	write(t, filepath.Join(dir, "apparmor-t.part-t-worker.log"), "apparmor worker part\n")
	write(t, filepath.Join(dir, "seccomp-other.log"), "a log of another run\n")
	return dir
}

func create(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := Create(dir, out, Options{Tool: "v0.3.1"}); err != nil {
		t.Fatal(err)
	}
	return out
}

// containsAll fails t for every one of wants that the text of the file
// name lacks.
func containsAll(t *testing.T, name, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", name, w, text)
		}
	}
}

// leavesNothing fails t if dir holds anything.
func leavesNothing(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// members reads the files of a bundle in order.
func members(t *testing.T, path string) ([]file, []*tar.Header) {
	t.Helper()
	var out []file
	var hdrs []*tar.Header
	for _, e := range tartest.ReadGzipFile(t, path) {
		out = append(out, file{e.Header.Name, e.Data})
		hdrs = append(hdrs, e.Header)
	}
	return out, hdrs
}

func member(t *testing.T, fs []file, name string) string {
	t.Helper()
	for _, f := range fs {
		if f.name == name {
			return string(f.data)
		}
	}
	t.Fatalf("bundle has no %s", name)
	return ""
}

func rewrite(t *testing.T, path string, fs []file) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTarGz(f, fs, finished); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func sums(fs []file) []byte {
	var b bytes.Buffer
	for _, f := range fs {
		if f.name != SumsFile {
			h := sha256.Sum256(f.data)
			fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h[:]), f.name)
		}
	}
	return b.Bytes()
}

func TestCreateVerify(t *testing.T) {
	out := create(t, runDir(t))
	s, err := Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Files != 8 || s.APIServer != "1.37.2" || s.Cluster != "t" || s.Specs != 7 {
		t.Errorf("summary %+v", s)
	}
	if c := s.Counts; c[skew.Pass] != 3 || c[skew.Deviation] != 1 || c[skew.Fail] != 1 || c[skew.Skip] != 2 {
		t.Errorf("counts %v", c)
	}
	if got, want := s.String(), "8 files, apiserver v1.37.2, 3 pass, 1 deviation, 1 fail, 2 skip; the run is not green"; got != want {
		t.Errorf("summary line %q, want %q", got, want)
	}

	fs, _ := members(t, out)
	var names []string
	for _, f := range fs {
		names = append(names, f.name)
	}
	if got := strings.Join(names, " "); got != "README.txt command.txt e2e.log junit_01.xml oracle.md run.json versions.txt SHA256SUMS" {
		t.Errorf("members: %s", got)
	}

	// junit_01.xml: one <testsuites> document with every case and its properties.
	junit := member(t, fs, JUnitFile)
	if !strings.Contains(junit, "<testsuites ") || strings.Count(junit, "<testsuites") != 1 {
		t.Errorf("junit_01.xml is not one <testsuites> document:\n%s", junit)
	}
	suites, err := reports.ReadJUnit(strings.NewReader(junit))
	if err != nil {
		t.Fatal(err)
	}
	var got []reports.Result
	for _, s := range suites {
		if s.Cluster != "t" {
			t.Errorf("suite %s lost its cluster: %q", s.Name, s.Cluster)
		}
		got = append(got, s.Results...)
	}
	want := append(append([]reports.Result{}, apparmorResults...), seccompResults...) // junit-t.apparmor.xml sorts first
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.ID != w.ID || g.Verdict != w.Verdict || g.Node != w.Node || g.Kubelet != w.Kubelet ||
			g.APIServer != w.APIServer || g.Observed != w.Observed || g.Expected != w.Expected || g.KEP != w.KEP ||
			g.Outcome != w.Outcome || g.Reason != w.Reason || g.Failure != w.Failure {
			t.Errorf("result %d:\n got  %+v\n want %+v", i, g, w)
		}
	}

	log := member(t, fs, LogFile)
	containsAll(t, "e2e.log", log, "kube-apiserver version: v1.37.2\n", "kubelet version: v1.34.4 (node t-worker)\n",
		"kubelet version: v1.37.2 (node t-control-plane, control plane)\n", "not a CNCF certification",
		"==> seccomp-t.log <==\nseccomp suite log line 1\nline 2\n",
		"==> apparmor-t.part-api.log <==\napparmor api part, no final newline\n\n==> apparmor-t.part-t-worker.log <==\n")
	if strings.Contains(log, "another run") {
		t.Errorf("e2e.log holds a log the record does not name:\n%s", log)
	}

	if got, want := member(t, fs, CommandFile), `skewproof run --apiserver 1.37.2 --kubelets 1.34.4,1.37.2 --label-filter 'smoke && !slow' --junit-dir '/tmp/run dir' --focus 'it'\''s'`+"\n"; got != want {
		t.Errorf("command.txt = %q, want %q", got, want)
	}
	versions := member(t, fs, VersionsFile)
	containsAll(t, "versions.txt", versions, "skewproof (run)     v0.3.0", "skewproof (bundle)  v0.3.1", "kube-apiserver      v1.37.2",
		"t-worker2", "6.12.0-uml", "containerd://2.1.3", "cgroup v2")

	oracle := member(t, fs, OracleFile)
	containsAll(t, "oracle.md", oracle,
		"# Oracle rules in force: kube-apiserver v1.37.2\n",
		"- kubelet v1.34.4 on t-worker: seccomp yes, AppArmor no, runtime containerd\n",
		"- kubelet v1.37.2 on t-worker2: seccomp yes, AppArmor yes, runtime containerd\n",
		"## Expected outcomes: kube-apiserver v1.37.2, kubelet v1.34.4\n",
		"## Expected outcomes: kube-apiserver v1.37.2, kubelet v1.37.2\n",
		"`skewproof simulate --apiserver 1.37.2 --kubelet 1.34.4 --apparmor off --format markdown`",
		"| `seccomp/api/types` | apiserver |",
		"### Deviations\n",
		"## Citations\n",
		"| `seccomp/api/types` | apiserver | KEP-135 §Proposal › API › Pod API | pkg/apis/core/validation/validation.go",
	)
	if strings.Contains(oracle, "t-control-plane") {
		t.Errorf("oracle.md evaluates the control plane's kubelet though the run has workers")
	}
	if strings.Count(oracle, "\n# ") != 0 || !strings.HasPrefix(oracle, "# ") {
		t.Errorf("oracle.md has more than one top heading")
	}

	readme := member(t, fs, ReadmeFile)
	if !strings.Contains(readme, "NOT a CNCF\ncertification") || !strings.Contains(readme, "[Conformance]") {
		t.Errorf("README.txt does not say it is not a certification:\n%s", readme)
	}
}

// The record in the bundle is the run's run.json, byte for byte.
func TestRecordCopied(t *testing.T) {
	dir := runDir(t)
	fs, _ := members(t, create(t, dir))
	want, _ := os.ReadFile(filepath.Join(dir, RecordFile))
	if got := member(t, fs, RecordFile); got != string(want) {
		t.Errorf("run.json differs from the run's:\n%s", got)
	}
}

// SHA256SUMS is what sha256sum -c reads.
func TestSumsFormat(t *testing.T) {
	out := create(t, runDir(t))
	fs, _ := members(t, out)
	if got, want := member(t, fs, SumsFile), string(sums(fs)); got != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("no sha256sum")
	}
	dir := t.TempDir()
	for _, f := range fs {
		write(t, filepath.Join(dir, f.name), string(f.data))
	}
	cmd := exec.Command(sha, "-c", "--strict", SumsFile)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, b)
	}
}

func TestVerifyTampered(t *testing.T) {
	out := create(t, runDir(t))
	orig, _ := members(t, out)
	clone := func() []file {
		c := make([]file, len(orig))
		for i, f := range orig {
			c[i] = file{f.name, append([]byte{}, f.data...)}
		}
		return c
	}
	type tamper struct {
		name    string
		files   func() []file
		wantErr string
	}
	var cases []tamper
	for i, f := range orig {
		// One byte changed in each file.
		cases = append(cases, tamper{"change " + f.name, func() []file {
			c := clone()
			c[i].data[len(c[i].data)/2] ^= 0x01
			return c
		}, f.name})
		// Each file removed.
		cases = append(cases, tamper{"remove " + f.name, func() []file {
			c := clone()
			return append(c[:i], c[i+1:]...)
		}, f.name + " is missing"})
		if f.name != SumsFile {
			// Each file removed with its line of SHA256SUMS.
			cases = append(cases, tamper{"remove " + f.name + " and its sum", func() []file {
				c := clone()
				c = append(c[:i], c[i+1:]...)
				c[len(c)-1].data = sums(c)
				return c
			}, f.name + " is missing"})
		}
	}
	cases = append(cases,
		tamper{"add a file", func() []file {
			return append(clone(), file{"extra.txt", []byte("x\n")})
		}, "extra.txt"},
		tamper{"add a file twice", func() []file {
			c := clone()
			return append(c, file{"e2e.log", c[2].data})
		}, "e2e.log"},
		tamper{"junit root <testsuite>", func() []file {
			c := clone()
			c[3].data = []byte(`<?xml version="1.0"?><testsuite name="x" tests="0"></testsuite>`)
			c[len(c)-1].data = sums(c)
			return c
		}, JUnitFile},
		tamper{"run.json not JSON", func() []file {
			c := clone()
			c[5].data = []byte("{not json")
			c[len(c)-1].data = sums(c)
			return c
		}, RecordFile},
		tamper{"SHA256SUMS lists itself", func() []file {
			c := clone()
			c[len(c)-1].data = append(c[len(c)-1].data, []byte(strings.Repeat("0", 64)+"  SHA256SUMS\n")...)
			return c
		}, "lists SHA256SUMS itself"},
		tamper{"malformed SHA256SUMS", func() []file {
			c := clone()
			c[len(c)-1].data = append([]byte("nonsense\n"), c[len(c)-1].data...)
			return c
		}, SumsFile},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "b.tar.gz")
			rewrite(t, p, c.files())
			_, err := Verify(p)
			if err == nil {
				t.Fatal("verify passed")
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error does not name %s: %v", c.wantErr, err)
			}
		})
	}

	// The rewritten original still verifies: the cases fail for their change.
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	rewrite(t, p, clone())
	if _, err := Verify(p); err != nil {
		t.Fatalf("untampered rewrite: %v", err)
	}

	// A byte of the compressed file changed.
	raw, _ := os.ReadFile(out)
	for _, at := range []int{len(raw) / 2, len(raw) - 3} {
		bad := append([]byte{}, raw...)
		bad[at] ^= 0xff
		p := filepath.Join(t.TempDir(), "b.tar.gz")
		write(t, p, string(bad))
		if _, err := Verify(p); err == nil {
			t.Errorf("verify passed with byte %d of the .tar.gz changed", at)
		}
	}
}

func TestCreateNoRecord(t *testing.T) {
	dir := runDir(t)
	os.Remove(filepath.Join(dir, RecordFile))
	outDir := t.TempDir()
	out := filepath.Join(outDir, "b.tar.gz")
	err := Create(dir, out, Options{})
	if err == nil {
		t.Fatal("bundled a directory without run.json")
	}
	if !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "--junit-dir") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line naming --junit-dir: %v", err)
	}
	leavesNothing(t, outDir)
}

func TestCreateErrorsLeaveNothing(t *testing.T) {
	for name, breakDir := range map[string]func(dir string){
		"no JUnit": func(dir string) {
			os.Remove(filepath.Join(dir, "junit-t.xml"))
			os.Remove(filepath.Join(dir, "junit-t.apparmor.xml"))
		},
		"bad JUnit":    func(dir string) { os.WriteFile(filepath.Join(dir, "junit-t.xml"), []byte("<testsuites"), 0o644) },
		"bad run.json": func(dir string) { os.WriteFile(filepath.Join(dir, RecordFile), []byte("{"), 0o644) },
		"other cluster": func(dir string) {
			reports.WriteJUnitFile(filepath.Join(dir, "junit-u.xml"), reports.Suite{Name: "seccomp", Cluster: "u", Results: seccompResults})
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := runDir(t)
			breakDir(dir)
			outDir := t.TempDir()
			if err := Create(dir, filepath.Join(outDir, "b.tar.gz"), Options{}); err == nil {
				t.Fatal("no error")
			} else if name == "other cluster" && !strings.Contains(err.Error(), "junit-u.xml") {
				t.Errorf("error does not name junit-u.xml: %v", err)
			}
			leavesNothing(t, outDir)
		})
	}
}

// A failure after the bundle is written (here: the output is a directory)
// removes the partial file.
func TestCreateRenameFailureLeavesNothing(t *testing.T) {
	outDir := t.TempDir()
	out := filepath.Join(outDir, "b.tar.gz")
	if err := os.MkdirAll(filepath.Join(out, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Create(runDir(t), out, Options{Overwrite: true}); err == nil {
		t.Fatal("no error")
	}
	if left, _ := os.ReadDir(outDir); len(left) != 1 || left[0].Name() != "b.tar.gz" {
		t.Errorf("left behind: %v", left)
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	dir := runDir(t)
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	write(t, out, "keep me")
	if err := Create(dir, out, Options{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Errorf("existing file changed")
	}
	if err := Create(dir, out, Options{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(out); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
		t.Errorf("left behind: %v", left)
	}
}

// Bundles of the same directory are byte-identical, whenever they are made
// and whatever the files' own times.
func TestDeterministic(t *testing.T) {
	dir := runDir(t)
	a, _ := os.ReadFile(create(t, dir))
	later := time.Now().Add(time.Hour)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Chtimes(filepath.Join(dir, e.Name()), later, later)
	}
	bPath := create(t, dir)
	b, _ := os.ReadFile(bPath)
	if !bytes.Equal(a, b) {
		t.Fatal("two bundles of the same directory differ")
	}
	fs, hdrs := members(t, bPath)
	var names []string
	for i, h := range hdrs {
		if h.Mode != 0o644 || !h.ModTime.Equal(finished.Truncate(time.Second)) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Typeflag != tar.TypeReg {
			t.Errorf("%s: mode %o, mtime %v, uid %d, gid %d, uname %q", h.Name, h.Mode, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		if i < len(hdrs)-1 {
			names = append(names, fs[i].name)
		}
	}
	if !sort.StringsAreSorted(names) || hdrs[len(hdrs)-1].Name != SumsFile {
		t.Errorf("members not sorted with SHA256SUMS last: %v", names)
	}
}

// junit_01.xml and e2e.log of the run directory are taken as they are.
func TestCNCFNamedInputs(t *testing.T) {
	dir := runDir(t)
	if err := reports.WriteJUnitFile(filepath.Join(dir, JUnitFile),
		reports.Suite{Name: "seccomp", Cluster: "t", Results: seccompResults[:2]}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, LogFile), "the in-cluster log\n")
	out := create(t, dir)
	s, err := Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Specs != 2 {
		t.Errorf("junit-*.xml merged although junit_01.xml is present: %+v", s)
	}
	fs, _ := members(t, out)
	log := member(t, fs, LogFile)
	if !strings.HasSuffix(log, strings.Repeat("-", 72)+"\nthe in-cluster log\n") || strings.Contains(log, "==>") {
		t.Errorf("e2e.log:\n%s", log)
	}
}

// Without logs named in the record, every *.log of the directory is taken.
func TestLogsWithoutRecordLogs(t *testing.T) {
	dir := runDir(t)
	rec := sampleRecord()
	rec.Logs = nil
	if err := reports.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	fs, _ := members(t, create(t, dir))
	log := member(t, fs, LogFile)
	for _, n := range []string{"apparmor-t.part-api.log", "apparmor-t.part-t-worker.log", "seccomp-other.log", "seccomp-t.log"} {
		if !strings.Contains(log, "==> "+n+" <==\n") {
			t.Errorf("e2e.log lacks %s:\n%s", n, log)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "''",
		"plain-1.37.2,a=b": "plain-1.37.2,a=b",
		"a b":              "'a b'",
		"it's":             `'it'\''s'`,
		"$HOME":            "'$HOME'",
		"smoke && !slow":   "'smoke && !slow'",
	} {
		if got := reports.ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// What Hydrophone downloads (e2e.log and junit_01.xml only) bundles: the
// record comes from its line in e2e.log.
func TestHydrophoneOutputDir(t *testing.T) {
	dir := t.TempDir()
	if err := reports.WriteJUnitFile(filepath.Join(dir, JUnitFile),
		reports.Suite{Name: "seccomp", Cluster: "t", Results: seccompResults[:2]}); err != nil {
		t.Fatal(err)
	}
	line, err := reports.RecordLogLine(sampleRecord())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, LogFile), "Will run 2 of 64 specs\n"+line+"\nGinkgo ran 1 suite in 3s\n")
	out := create(t, dir)
	s, err := Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := members(t, out)
	var rec reports.Record
	if err := json.Unmarshal([]byte(member(t, fs, RecordFile)), &rec); err != nil || rec.Cluster != sampleRecord().Cluster {
		t.Errorf("run.json from e2e.log: %+v, %v", rec, err)
	}
	if s.Specs != 2 || s.APIServer != sampleRecord().APIServer {
		t.Errorf("summary %+v", s)
	}
	// Without the line there is no record.
	write(t, filepath.Join(dir, LogFile), "Will run 2 of 64 specs\n")
	if err := Create(dir, filepath.Join(t.TempDir(), "b.tar.gz"), Options{}); !errors.Is(err, ErrNoRecord) {
		t.Errorf("bundled without a record: %v", err)
	}
}

// A vendor cluster at a release nobody has read gets "not researched" in
// oracle.md, never a confident expectation, and the citations say which
// releases each rule was read at.
func TestOracleNotResearched(t *testing.T) {
	rec := reports.Record{APIServer: "v1.38.0+vendor1", Nodes: []reports.NodeRecord{
		{Name: "w1", Kubelet: "v1.38.0+vendor1", ContainerRuntime: "containerd://2.1.3"},
		{Name: "w2", Kubelet: "v1.37.2", ContainerRuntime: "containerd://2.1.3"},
	}}
	var b strings.Builder
	if err := writeOracle(&b, rec); err != nil {
		t.Fatal(err)
	}
	oracle := b.String()
	containsAll(t, "oracle.md", oracle,
		"| `seccomp/api/types` | apiserver | not researched (see skip) | seccomp GA: accepted; seccompProfile stored as sent",
		"| no | not researched at kube-apiserver v1.38.0 (sources read: v1.19.16 … v1.37.2) |\n",
		"| `seccomp/kubelet/enforce` | kubelet | not researched (see skip) | seccomp GA: ",
		"| no | not researched at kubelet v1.38.0 (sources read: v1.19.16 … v1.37.2) |\n",
		"| no | not researched at kube-apiserver v1.38.0 (sources read: v1.29.6 … v1.37.2); host has no AppArmor |\n",
		"| KEP-135 §Proposal › API › Pod API | pkg/apis/core/validation/validation.go: validateSeccompProfileField, validateSeccompProfileType (v1.19.16…v1.37.2) | v1.19.16 … v1.37.2 |",
	)
	if strings.Contains(oracle, "### Deviations") {
		t.Errorf("oracle.md claims deviations at v1.38.0:\n%s", oracle)
	}
}
