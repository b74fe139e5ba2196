package nodeimage

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/nodefacts"
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
	raw, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), kindModule+" "+kindVersion()) {
		t.Errorf("kindVersion() = %s, not the version go.mod requires", kindVersion())
	}
}

func TestContainerdConfigNeverPullsAndClampsOOM(t *testing.T) {
	c := containerdConfig("registry.k8s.io/pause:3.10.2", ociRuntime{name: noderuntime.OCIRunc, nodePath: nodeRunc})
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
	if got := (Spec{ControlPlane: "1.37.2"}).tag(); got != "v1.37.2" {
		t.Errorf("control-plane tag %q", got)
	}
	if got := (Spec{ControlPlane: "1.37.2", Kubelet: "v1.34.4"}).tag(); got != "v1.37.2-kubelet-v1.34.4" {
		t.Errorf("worker tag %q", got)
	}
	if !(Spec{ControlPlane: "1.37.2", Kubelet: "v1.37.2"}).isControlPlane() {
		t.Error("same versions should make a control-plane image")
	}
}

func TestMissingCaps(t *testing.T) {
	all := uint64(1)<<41 - 1
	m := MissingCaps(all &^ (1 << 24))
	if len(m) != 1 || m[0] != "CAP_SYS_RESOURCE" {
		t.Errorf("MissingCaps without bit 24 = %v, want [CAP_SYS_RESOURCE]", m)
	}
}

func TestNodeRuntimeInConfigAndImage(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "myrt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec runc \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vendor := map[string]string{"myrt": exe}
	def, err := resolveOCI(noderuntime.Runtime{}, vendor)
	if err != nil || def.nodePath != nodeRunc || def.hostPath != "" {
		t.Fatalf("default runtime %+v, %v", def, err)
	}
	if c := containerdConfig("p", def); strings.Contains(c, `BinaryName = "`+nodeRunc+`"`) || !strings.Contains(c, "runtimes.runc]\n") {
		t.Error("the default runtime's config names runc's binary (the shim's default)")
	}
	crun, _ := resolveOCI(noderuntime.Runtime{OCI: noderuntime.OCICrun}, vendor)
	c := containerdConfig("p", crun)
	for _, want := range []string{
		"runtimes.runc.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"\n",
		"runtimes.crun]\n  runtime_type = \"io.containerd.runc.v2\"",
		"runtimes.crun.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"\n",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("containerd config for crun lacks %q:\n%s", want, c)
		}
	}
	if s := restrictedRuntimes[0].script(crun.nodePath); !strings.Contains(s, `exec /usr/bin/crun "$@"`) || !strings.Contains(s, "crun without seccomp") {
		t.Errorf("restricted runtime around crun:\n%s", s)
	}
	mine, err := resolveOCI(noderuntime.Runtime{OCI: "myrt"}, vendor)
	if err != nil || mine.nodePath != vendorOCIDir+"/myrt" || mine.hostPath != exe || len(mine.digest) != 64 {
		t.Fatalf("vendor runtime %+v, %v", mine, err)
	}
	if _, err := resolveOCI(noderuntime.Runtime{OCI: "other"}, vendor); err == nil {
		t.Error("an unknown OCI runtime resolved")
	}

	base := &baseImage{Key: "k"}
	spec := Spec{ControlPlane: "1.37.2", Kubelet: "1.37.2"}
	refDefault, _ := nodeImageRef(base, spec, def)
	spec.Runtime = noderuntime.Runtime{OCI: noderuntime.OCICrun}
	if spec.isControlPlane() {
		t.Error("a crun worker at the control plane's version is taken for the control plane")
	}
	refCrun, _ := nodeImageRef(base, spec, crun)
	if !strings.HasPrefix(refCrun, nodeImageRepo+":v1.37.2-kubelet-v1.37.2-containerd-crun-") || refCrun == refDefault {
		t.Errorf("crun image %q (default %q)", refCrun, refDefault)
	}
	// A different binary of the same name is another image.
	spec.Runtime = noderuntime.Runtime{OCI: "myrt"}
	ref1, _ := nodeImageRef(base, spec, mine)
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec crun \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine2, _ := resolveOCI(noderuntime.Runtime{OCI: "myrt"}, vendor)
	if ref2, _ := nodeImageRef(base, spec, mine2); ref2 == ref1 {
		t.Error("a changed vendor binary keeps its node image")
	}
}

func TestVersionLabel(t *testing.T) {
	for in, want := range map[string]string{
		"runc version 1.1.15+ds1\ncommit: 1.1.15+ds1-2+b4\nspec: 1.2.0\n": "1.1.15",
		"crun version 1.21\ncommit: 10269840\n":                           "1.21",
		"":                                                                "unknown",
		"my runtime v0.1~beta/2":                                          "v0.1-beta-2",
		"+":                                                               "unknown",
	} {
		if got := versionLabel(in); got != want {
			t.Errorf("versionLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// etcd 3.4 (kubeadm v1.19-v1.21) is built from the module go.etcd.io/etcd
// at the version etcd34Versions names; 3.5 on from go.etcd.io/etcd/server/v3
// at the tag's release.
func TestEtcdProgramSet(t *testing.T) {
	s := etcdProgramSet("3.4.13-0")
	if s.Module != "go.etcd.io/etcd" || s.Version != "v0.5.0-alpha.5.0.20200910180754-dd1b699fc489" || s.Programs["etcd"] != "go.etcd.io/etcd" {
		t.Errorf("etcd 3.4.13: %+v", s)
	}
	s = etcdProgramSet("3.5.6-0")
	if s.Module != "go.etcd.io/etcd/server/v3" || s.Version != "v3.5.6" || s.Programs["etcd"] != "go.etcd.io/etcd/server/v3" {
		t.Errorf("etcd 3.5.6: %+v", s)
	}
}

// Kubelets before v1.21 get the drop-in that removes kind's bind mounts of
// their cgroup root, in their node's files and image key; later ones do not.
func TestCgroupBindsDropIn(t *testing.T) {
	for kl, want := range map[string]bool{"v1.19.16": true, "1.20.15": true, "v1.21.14": false, "v1.37.2": false} {
		if got := needsCgroupBindsDropIn(kl); got != want {
			t.Errorf("needsCgroupBindsDropIn(%s) = %v, want %v", kl, got, want)
		}
	}
	base := &baseImage{Key: "k"}
	_, k1 := nodeImageRef(base, Spec{ControlPlane: "1.19.16", Kubelet: "1.19.16"}, ociRuntime{})
	_, k2 := nodeImageRef(base, Spec{ControlPlane: "1.19.16", Kubelet: "1.19.16"}, ociRuntime{})
	if k1 != k2 {
		t.Fatal("the key is not stable")
	}
	// systemd unescapes $$ and \\ once: the shell gets $( and \. .
	if !strings.Contains(cgroupBindsDropIn, `$$(findmnt`) || !strings.Contains(cgroupBindsDropIn, `"$$m"`) || !strings.Contains(cgroupBindsDropIn, `(\\.slice)?$$`) {
		t.Errorf("drop-in escapes: %s", cgroupBindsDropIn)
	}
}

// Every OCI runtime the grammar says the node images carry has a path in
// the node, and no other.
func TestNodeOCIRuntimesAreTheGrammars(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(nodeOCIRuntimes)), noderuntime.OCIRuntimes(); !slices.Equal(got, want) {
		t.Errorf("node images' OCI runtimes %v, noderuntime.OCIRuntimes %v", got, want)
	}
}
