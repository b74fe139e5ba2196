package nodeimage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/nodefacts"

	"github.com/BurntSushi/toml"
)

// crioFile mirrors what crioConfig may set of CRI-O v1.34.0's configuration,
// with the keys of its structures (pkg/config/config.go: RootConfig,
// APIConfig, RuntimeConfig, RuntimeHandler, ImageConfig, NetworkConfig). A
// key that is not here is one CRI-O would not read.
type crioFile struct {
	CRIO struct {
		StorageDriver string `toml:"storage_driver"`
		API           struct {
			Listen string `toml:"listen"`
		} `toml:"api"`
		Runtime struct {
			DefaultRuntime string `toml:"default_runtime"`
			CgroupManager  string `toml:"cgroup_manager"`
			PinnsPath      string `toml:"pinns_path"`
			Runtimes       map[string]struct {
				RuntimePath   string `toml:"runtime_path"`
				RuntimeType   string `toml:"runtime_type"`
				RuntimeRoot   string `toml:"runtime_root"`
				MonitorPath   string `toml:"monitor_path"`
				MonitorCgroup string `toml:"monitor_cgroup"`
			} `toml:"runtimes"`
		} `toml:"runtime"`
		Image struct {
			PauseImage      string   `toml:"pause_image"`
			PinnedImages    []string `toml:"pinned_images"`
			SignaturePolicy string   `toml:"signature_policy"`
		} `toml:"image"`
		Network struct {
			NetworkDir string   `toml:"network_dir"`
			PluginDirs []string `toml:"plugin_dirs"`
		} `toml:"network"`
	} `toml:"crio"`
}

func TestCRIOConfigParsesAndNamesEveryHandler(t *testing.T) {
	const pause = "registry.k8s.io/pause:3.10.2"
	crun := ociRuntime{name: noderuntime.OCICrun, nodePath: nodeOCIRuntimes[noderuntime.OCICrun]}
	var c crioFile
	md, err := toml.Decode(crioConfig(pause, crun), &c)
	if err != nil {
		t.Fatalf("CRI-O config does not parse: %v\n%s", err, crioConfig(pause, crun))
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("keys CRI-O 1.34 does not read: %v", u)
	}
	if c.CRIO.API.Listen != crioListen || c.CRIO.Runtime.CgroupManager != "systemd" || c.CRIO.Runtime.PinnsPath != pinnsBinary || c.CRIO.Image.PauseImage != pause {
		t.Errorf("config %+v", c.CRIO)
	}
	// The kubelet's pods name no handler (default_runtime) or one of the
	// RuntimeClasses skewproof creates; each must be there, as in
	// containerd's configuration.
	want := []string{"runc", noderuntime.OCICrun, "test-handler"}
	want = append(want, nodefacts.RestrictedRuntimeHandlers()...)
	for _, h := range want {
		r, ok := c.CRIO.Runtime.Runtimes[h]
		if !ok {
			t.Errorf("no runtime handler %s", h)
			continue
		}
		if r.RuntimePath != crioWrapperDir+"/"+h || r.MonitorPath != conmonBinary || r.RuntimeType != "oci" {
			t.Errorf("handler %s: %+v", h, r)
		}
	}
	if _, ok := c.CRIO.Runtime.Runtimes[c.CRIO.Runtime.DefaultRuntime]; !ok {
		t.Errorf("default runtime %q is not a handler", c.CRIO.Runtime.DefaultRuntime)
	}
	// Every image skewproof puts on a node is pinned (a pattern with a
	// lone "*" panics in CRI-O 1.34).
	for _, img := range []string{pause, nodefacts.BusyBoxImage, "registry.k8s.io/kube-proxy:v1.37.2", "skewproof.local/skewproof-agent:0123"} {
		if !slices.ContainsFunc(c.CRIO.Image.PinnedImages, func(p string) bool {
			return p != "*" && strings.HasSuffix(p, "*") && strings.HasPrefix(img, strings.TrimSuffix(p, "*"))
		}) {
			t.Errorf("image %s is not pinned by %q", img, c.CRIO.Image.PinnedImages)
		}
	}
}

// TestCRIORuntimeWrapper runs a handler's wrapper with bash and jq around a
// runtime that records the spec it is given.
func TestCRIORuntimeWrapper(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (hack/setup-host.sh installs jq): %v", tool, err)
		}
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "runtime")
	fake := "#!/bin/sh\nprev=\nfor a; do\n\tcase \"$prev\" in --bundle) cp \"$a/config.json\" " + dir + "/seen.json ;; --process) cp \"$a\" " + dir + "/seen.json ;; esac\n\tprev=$a\ndone\necho \"$@\" > " + dir + "/args\n"
	if err := os.WriteFile(record, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := `{"process": {"oomScoreAdj": -997, "capabilities": {"bounding": ["CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN"], "effective": ["CAP_CHOWN", "CAP_SYS_RESOURCE"]}},
		"linux": {"seccomp": {"defaultAction": "SCMP_ACT_ERRNO"}, "resources": {"hugepageLimits": [{"pageSize": "2MB", "limit": 0}], "memory": {"limit": 1}}}}`
	bnd := CapBoundingSet()
	missing := MissingCaps(bnd)
	ownAdj, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := strconv.Atoi(strings.TrimSpace(string(ownAdj)))
	_, err = os.Stat("/sys/fs/cgroup/cgroup.controllers")
	v1 := err != nil

	run := func(h crioHandler, args ...string) map[string]any {
		t.Helper()
		h.runtime = record
		w := filepath.Join(dir, "wrapper-"+h.name)
		if err := os.WriteFile(w, []byte(crioRuntimeWrapper(h)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(w, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", w, args, err, out)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "args"))
		if strings.TrimSpace(string(got)) != strings.Join(args, " ") {
			t.Errorf("runtime got arguments %q, want %q", got, strings.Join(args, " "))
		}
		var m map[string]any
		b, err := os.ReadFile(filepath.Join(dir, "seen.json"))
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			t.Fatalf("the spec the runtime saw: %v", err)
		}
		return m
	}
	capsOf := func(m map[string]any, set string) []string {
		var out []string
		for _, c := range m[set].([]any) {
			out = append(out, c.(string))
		}
		return out
	}
	wantCaps := func(in ...string) []string {
		var out []string
		for _, c := range in {
			if !slices.Contains(missing, c) {
				out = append(out, c)
			}
		}
		return out
	}

	bundle := filepath.Join(dir, "bundle")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []crioHandler{{name: "runc"}, {name: nodefacts.NoSeccompHandler, drop: ".linux.seccomp", lacks: "seccomp"}} {
		if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		m := run(h, "--root", "/run/x", "--systemd-cgroup", "create", "--bundle", bundle, "--pid-file", "p", "id1")
		proc := m["process"].(map[string]any)
		caps := proc["capabilities"].(map[string]any)
		if got, want := capsOf(caps, "bounding"), wantCaps("CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN"); !slices.Equal(got, want) {
			t.Errorf("%s: bounding %v, want %v (this host lacks %v)", h.name, got, want, missing)
		}
		if got := int(proc["oomScoreAdj"].(float64)); got != max(-997, own) {
			t.Errorf("%s: oomScoreAdj %d, want %d (its own is %d)", h.name, got, max(-997, own), own)
		}
		lin := m["linux"].(map[string]any)
		res := lin["resources"].(map[string]any)
		if _, has := res["hugepageLimits"]; has == v1 {
			t.Errorf("%s: hugepageLimits kept %v on cgroup v1 %v", h.name, has, v1)
		}
		if res["memory"] == nil {
			t.Errorf("%s: the memory limit is gone", h.name)
		}
		if _, has := lin["seccomp"]; has != (h.drop == "") {
			t.Errorf("%s: seccomp kept %v", h.name, has)
		}
	}
	// exec: the process file's capabilities.
	process := filepath.Join(dir, "process.json")
	if err := os.WriteFile(process, []byte(`{"capabilities": {"bounding": ["CAP_CHOWN", "CAP_SYS_RESOURCE"]}, "args": ["sh"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m := run(crioHandler{name: "runc"}, "--root", "/run/x", "exec", "--process", process, "id1")
	if got, want := capsOf(m["capabilities"].(map[string]any), "bounding"), wantCaps("CAP_CHOWN", "CAP_SYS_RESOURCE"); !slices.Equal(got, want) {
		t.Errorf("exec: bounding %v, want %v", got, want)
	}
}
