package clusters

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/nodefacts"

	"github.com/skewproof/skewproof/internal/cachedir"
)

func TestParseImageRef(t *testing.T) {
	for _, tc := range []struct{ in, name, tag string }{
		{"registry.k8s.io/etcd:3.7.0-0", "etcd", "3.7.0-0"},
		{"registry.k8s.io/coredns/coredns:v1.14.6", "coredns", "v1.14.6"},
		{"localhost:5000/pause", "pause", "latest"},
	} {
		r := parseImageRef(tc.in)
		if r.Name != tc.name || r.Tag != tc.tag || r.Full != tc.in {
			t.Errorf("parseImageRef(%q) = %+v, want name %s tag %s", tc.in, r, tc.name, tc.tag)
		}
	}
}

func TestKindVersionMatchesGoMod(t *testing.T) {
	raw, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), kindModule+" "+kindVersion()) {
		t.Errorf("kindVersion() = %s, not the version go.mod requires", kindVersion())
	}
}

func TestContainerdConfigNeverPullsAndClampsOOM(t *testing.T) {
	c := containerdConfig("registry.k8s.io/pause:3.10.2", ociRuntime{name: ociRunc, nodePath: nodeRunc})
	for _, want := range []string{
		`sandbox_image = "registry.k8s.io/pause:3.10.2"`,
		"restrict_oom_score_adj = true",
		`config_path = "/etc/containerd/certs.d"`,
		"runtimes." + nodefacts.NoSeccompHandler + "]",
		"runtimes." + nodefacts.NoSeccompHandler + ".options]",
		`BinaryName = "/usr/local/sbin/runc-no-seccomp"`,
		"runtimes." + nodefacts.NoAppArmorHandler + "]",
		"runtimes." + nodefacts.NoAppArmorHandler + ".options]",
		`BinaryName = "/usr/local/sbin/runc-no-apparmor"`,
	} {
		if !strings.Contains(c, want) {
			t.Errorf("containerd config lacks %q", want)
		}
	}
	if !strings.Contains(closedRegistryHosts, `server = "http://127.0.0.1:1"`) {
		t.Error("registry hosts do not point at the closed loopback port")
	}
	if n := strings.Count(c, "BinaryName"); n != len(restrictedRuntimes) {
		t.Errorf("containerd config names %d runtime binaries, want %d (one per restricted handler)", n, len(restrictedRuntimes))
	}
}

// The restricted runtimes run with sh against a bundle, with a fake runc
// that records its arguments and the config.json it was handed.
func TestRestrictedRuntimesDropTheirFieldAndExecRunc(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed: the runtimes' text is checked by TestRestrictedRuntimesText")
	}
	spec := `{"ociVersion":"1.2.0","process":{"args":["sh"],"apparmorProfile":"localhost-p"},"linux":{"seccomp":{"defaultAction":"SCMP_ACT_ERRNO"},"namespaces":[{"type":"pid"}]}}`
	for _, r := range restrictedRuntimes {
		t.Run(r.handler, func(t *testing.T) {
			dir := t.TempDir()
			bundle := filepath.Join(dir, "bundle")
			if err := os.Mkdir(bundle, 0o755); err != nil {
				t.Fatal(err)
			}
			fake := filepath.Join(dir, "runc")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" > "+dir+"/args\ncp "+bundle+"/config.json "+dir+"/seen.json\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			wrapper := filepath.Join(dir, "wrapper")
			if err := os.WriteFile(wrapper, []byte(fieldDroppingRuntime(r.field, r.lacks, fake)), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"--root", "/run/x", "create", "--bundle", bundle, "ctr1"},
				{"run", "--bundle=" + bundle, "ctr2"},
			} {
				if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(spec), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("bash", append([]string{wrapper}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %v: %s", args, err, out)
				}
				gotArgs, _ := os.ReadFile(filepath.Join(dir, "args"))
				if strings.TrimSpace(string(gotArgs)) != strings.Join(args, " ") {
					t.Errorf("runc got %q, want %q", gotArgs, strings.Join(args, " "))
				}
				var seen map[string]any
				raw, _ := os.ReadFile(filepath.Join(dir, "seen.json"))
				if err := json.Unmarshal(raw, &seen); err != nil {
					t.Fatalf("runc saw %q: %v", raw, err)
				}
				process, linux := seen["process"].(map[string]any), seen["linux"].(map[string]any)
				_, hasAppArmor := process["apparmorProfile"]
				_, hasSeccomp := linux["seccomp"]
				if want := r.field != ".process.apparmorProfile"; hasAppArmor != want {
					t.Errorf("%v: process.apparmorProfile present = %v, want %v", args, hasAppArmor, want)
				}
				if want := r.field != ".linux.seccomp"; hasSeccomp != want {
					t.Errorf("%v: linux.seccomp present = %v, want %v", args, hasSeccomp, want)
				}
				if process["args"] == nil || linux["namespaces"] == nil {
					t.Errorf("%v: the rest of the spec was not kept: %s", args, raw)
				}
			}
			// Any other subcommand leaves the bundle alone.
			if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("bash", wrapper, "state", "ctr1").CombinedOutput(); err != nil {
				t.Fatalf("state: %v: %s", err, out)
			}
			if raw, _ := os.ReadFile(filepath.Join(bundle, "config.json")); string(raw) != spec {
				t.Errorf("state changed config.json: %s", raw)
			}
		})
	}
}

func TestRestrictedRuntimesText(t *testing.T) {
	if got := nodefacts.RestrictedRuntimeHandlers(); len(got) != 2 || got[0] != nodefacts.NoSeccompHandler || got[1] != nodefacts.NoAppArmorHandler {
		t.Errorf("nodefacts.RestrictedRuntimeHandlers() = %v", got)
	}
	for _, r := range restrictedRuntimes {
		s := r.script("")
		for _, want := range []string{"#!/bin/bash\n", `edit "$bundle/config.json" 'del(` + r.field + `)'`, "exec " + nodeRunc + ` "$@"`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: runtime lacks %q", r.handler, want)
			}
		}
	}
}

func TestNodeImageSpecTags(t *testing.T) {
	if got := (NodeImageSpec{ControlPlane: "1.37.2"}).tag(); got != "v1.37.2" {
		t.Errorf("control-plane tag %q", got)
	}
	if got := (NodeImageSpec{ControlPlane: "1.37.2", Kubelet: "v1.34.4"}).tag(); got != "v1.37.2-kubelet-v1.34.4" {
		t.Errorf("worker tag %q", got)
	}
	if !(NodeImageSpec{ControlPlane: "1.37.2", Kubelet: "v1.37.2"}).isControlPlane() {
		t.Error("same versions should make a control-plane image")
	}
}

func TestMissingCaps(t *testing.T) {
	all := uint64(1)<<41 - 1
	m := missingCaps(all &^ (1 << 24))
	if len(m) != 1 || m[0] != "CAP_SYS_RESOURCE" {
		t.Errorf("missingCaps without bit 24 = %v, want [CAP_SYS_RESOURCE]", m)
	}
}

func TestCNIConfigUsesPodCIDR(t *testing.T) {
	var c struct {
		Plugins []struct {
			Type string
			IPAM struct {
				Ranges [][]struct{ Subnet string }
			}
		}
	}
	if err := json.Unmarshal([]byte(cniConfig("10.244.3.0/24")), &c); err != nil {
		t.Fatalf("CNI config is not JSON: %v", err)
	}
	if c.Plugins[0].Type != "ptp" || c.Plugins[0].IPAM.Ranges[0][0].Subnet != "10.244.3.0/24" {
		t.Errorf("CNI config %+v does not use the node's podCIDR", c)
	}
}

// On an AppArmor host every node gets the host's securityfs and the
// containerd drop-in that lets containerd apply AppArmor (this host may
// have no AppArmor, so the pieces are checked here, not on a cluster).
func TestNodeAppArmorMounts(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	path, err := writeContainerdAppArmorDropIn()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "UnsetEnvironment=container") {
		t.Fatalf("drop-in %s: %q, %v", path, b, err)
	}
	ms := nodeAppArmorMounts(path)
	if len(ms) != 2 || ms[0].HostPath != securityFS || ms[0].ContainerPath != securityFS || ms[0].Readonly ||
		ms[1].HostPath != path || ms[1].ContainerPath != containerdDropInPath || !ms[1].Readonly {
		t.Errorf("mounts %+v", ms)
	}
	if !strings.HasPrefix(containerdDropInPath, "/etc/systemd/system/containerd.service.d/") {
		t.Errorf("the drop-in must be a containerd.service drop-in: %s", containerdDropInPath)
	}
}
