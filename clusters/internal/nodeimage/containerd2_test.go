package nodeimage

import (
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"

	"github.com/BurntSushi/toml"
)

// containerdRuntime is one runtime handler's table, the same in
// containerd 1.7's configuration version 2 and 2.4's version 4 (the
// runc shim's options: api v1.12.0 types/runc/options/oci.pb.go, Options).
type containerdRuntime struct {
	Type            string `toml:"runtime_type"`
	BaseRuntimeSpec string `toml:"base_runtime_spec"`
	Options         struct {
		SystemdCgroup bool   `toml:"SystemdCgroup"`
		BinaryName    string `toml:"BinaryName"`
	} `toml:"options"`
}

// containerd2File mirrors what containerd2Config may set of containerd
// v2.4.2's configuration, with the keys of its structures: the file's
// (cmd/containerd/server/config/config.go, Config), the CRI image
// service's (internal/cri/config/config.go, ImageConfig and Registry) and
// the CRI runtime's (RuntimeConfig, ContainerdConfig, Runtime, CniConfig).
// A key that is not here is one containerd would not read.
type containerd2File struct {
	Version int `toml:"version"`
	Plugins struct {
		Images struct {
			Snapshotter           string            `toml:"snapshotter"`
			DiscardUnpackedLayers bool              `toml:"discard_unpacked_layers"`
			PinnedImages          map[string]string `toml:"pinned_images"`
			Registry              struct {
				ConfigPath string `toml:"config_path"`
			} `toml:"registry"`
		} `toml:"io.containerd.cri.v1.images"`
		Runtime struct {
			TolerateMissingHugetlbController bool `toml:"tolerate_missing_hugetlb_controller"`
			RestrictOOMScoreAdj              bool `toml:"restrict_oom_score_adj"`
			Containerd                       struct {
				DefaultRuntimeName string                       `toml:"default_runtime_name"`
				Runtimes           map[string]containerdRuntime `toml:"runtimes"`
			} `toml:"containerd"`
			CNI struct {
				BinDirs []string `toml:"bin_dirs"`
				ConfDir string   `toml:"conf_dir"`
			} `toml:"cni"`
		} `toml:"io.containerd.cri.v1.runtime"`
	} `toml:"plugins"`
}

// The configuration parses, every key is one containerd 2.4 reads, and it
// holds what containerdConfig holds for containerd 1.7: the sandbox image,
// the OOM clamp, no pulls, and every runtime handler with its runc.
func TestContainerd2ConfigParsesAndNamesEveryHandler(t *testing.T) {
	const pause = "registry.k8s.io/pause:3.10.2"
	var c containerd2File
	md, err := toml.Decode(containerd2Config(pause, ociRuntime{}), &c)
	if err != nil {
		t.Fatalf("containerd 2 config does not parse: %v\n%s", err, containerd2Config(pause, ociRuntime{}))
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("keys containerd 2.4 does not read: %v", u)
	}
	if c.Version != 4 {
		t.Errorf("version = %d, want 4 (containerd 2.4's ConfigVersion)", c.Version)
	}
	im, rt := c.Plugins.Images, c.Plugins.Runtime
	if im.PinnedImages["sandbox"] != pause || im.Snapshotter != "overlayfs" || !im.DiscardUnpackedLayers || im.Registry.ConfigPath != "/etc/containerd/certs.d" {
		t.Errorf("image service config %+v", im)
	}
	if !rt.RestrictOOMScoreAdj || !rt.TolerateMissingHugetlbController {
		t.Errorf("restrict_oom_score_adj %v, tolerate_missing_hugetlb_controller %v; want both", rt.RestrictOOMScoreAdj, rt.TolerateMissingHugetlbController)
	}
	if !slices.Equal(rt.CNI.BinDirs, []string{"/opt/cni/bin"}) || rt.CNI.ConfDir != "/etc/cni/net.d" {
		t.Errorf("cni config %+v", rt.CNI)
	}
	if rt.Containerd.DefaultRuntimeName != "runc" {
		t.Errorf("default runtime %q, want runc", rt.Containerd.DefaultRuntimeName)
	}
	want := map[string]string{"runc": nodeRunc, "test-handler": nodeRunc}
	for _, r := range restrictedRuntimes {
		want[r.handler] = r.binary
	}
	for _, h := range nodefacts.RestrictedRuntimeHandlers() {
		if want[h] == "" {
			t.Errorf("handler %s has no runtime", h)
		}
	}
	if len(rt.Containerd.Runtimes) != len(want) {
		t.Errorf("%d runtime handlers, want %d (%v)", len(rt.Containerd.Runtimes), len(want), want)
	}
	for h, bin := range want {
		r, ok := rt.Containerd.Runtimes[h]
		switch {
		case !ok:
			t.Errorf("no runtime handler %s", h)
		case r.Type != "io.containerd.runc.v2" || r.BaseRuntimeSpec != "/etc/containerd/cri-base.json" || !r.Options.SystemdCgroup || r.Options.BinaryName != bin:
			t.Errorf("runtime handler %s = %+v, want runc v2 shim, base spec, systemd cgroups, BinaryName %s", h, r, bin)
		}
	}
}

// containerd and ctr come from one build, the shim from another (its own
// tags); every one is stamped with the release's version.
func TestContainerd2Builds(t *testing.T) {
	got := map[string]bool{}
	for _, s := range containerd2ProgramSets() {
		if s.Module != "github.com/containerd/containerd/v2" || s.Version != "v2.4.2" {
			t.Errorf("program set %s %s", s.Module, s.Version)
		}
		if !strings.Contains(s.LDFlags, "-X github.com/containerd/containerd/v2/version.Version=v2.4.2") {
			t.Errorf("ldflags %q do not stamp the version", s.LDFlags)
		}
		for n, pkg := range s.Programs {
			got[n] = true
			if pkg != "github.com/containerd/containerd/v2/cmd/"+n {
				t.Errorf("%s built from %s", n, pkg)
			}
			if wantShim := n == "containerd-shim-runc-v2"; strings.Contains(s.Tags, "no_grpc") != wantShim {
				t.Errorf("%s built with tags %q", n, s.Tags)
			}
		}
	}
	for _, n := range containerd2Programs {
		if !got[n] {
			t.Errorf("%s is not built", n)
		}
	}
}

// An image with containerd 2 has a tag and key of its own.
func TestNodeImageCRITagAndKey(t *testing.T) {
	base := &baseImage{Key: "basekey"}
	runc := ociRuntime{name: noderuntime.OCIRunc, nodePath: nodeRunc}
	plain := Spec{ControlPlane: "1.37.2", Kubelet: "1.34.4"}
	c2 := plain
	c2.Runtime.CRI = noderuntime.CRIContainerd2
	if got := c2.tag(); got != "v1.37.2-kubelet-v1.34.4-containerd2-runc" {
		t.Errorf("tag %s", got)
	}
	if got := (Spec{ControlPlane: "1.37.2", Runtime: noderuntime.Runtime{CRI: noderuntime.CRIContainerd2}}).tag(); got != "v1.37.2-kubelet-v1.37.2-containerd2-runc" {
		t.Errorf("worker tag at the control plane's version %s", got)
	}
	if got := plain.tag(); got != "v1.37.2-kubelet-v1.34.4" {
		t.Errorf("tag %s", got)
	}
	refPlain, keyPlain := nodeImageRef(base, plain, runc)
	refC2, keyC2 := nodeImageRef(base, c2, runc)
	if keyPlain == keyC2 || !strings.HasPrefix(refC2, nodeImageRepo+":v1.37.2-kubelet-v1.34.4-containerd2-runc-") || !strings.HasSuffix(refPlain, "-"+keyPlain) {
		t.Errorf("refs %s and %s", refPlain, refC2)
	}
	crun := ociRuntime{name: noderuntime.OCICrun, nodePath: "/usr/bin/crun"}
	c := containerd2Config("p", crun)
	for _, want := range []string{
		"runtimes.runc.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"",
		"runtimes.crun.options]\n    SystemdCgroup = true\n    BinaryName = \"/usr/bin/crun\"",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("containerd 2 config with crun lacks %q", want)
		}
	}
	if _, err := Build(t.Context(), command.Host{Progress: progress.New(io.Discard)}, Spec{ControlPlane: "1.37.2", Runtime: noderuntime.Runtime{CRI: "cri-o"}}); err == nil || !strings.Contains(err.Error(), "not one skewproof builds") {
		t.Errorf("CRI cri-o: %v", err)
	}
}

// containerd1File mirrors what containerdConfig may set of containerd
// v1.7.24's configuration version 2 (pkg/cri/config/config.go:
// PluginConfig, ContainerdConfig, Runtime, CniConfig, Registry). A key that
// is not here is one containerd would not read.
type containerd1File struct {
	Version int `toml:"version"`
	Plugins struct {
		CRI struct {
			SandboxImage                     string `toml:"sandbox_image"`
			TolerateMissingHugetlbController bool   `toml:"tolerate_missing_hugetlb_controller"`
			RestrictOOMScoreAdj              bool   `toml:"restrict_oom_score_adj"`
			Containerd                       struct {
				DiscardUnpackedLayers bool                         `toml:"discard_unpacked_layers"`
				Snapshotter           string                       `toml:"snapshotter"`
				DefaultRuntimeName    string                       `toml:"default_runtime_name"`
				Runtimes              map[string]containerdRuntime `toml:"runtimes"`
			} `toml:"containerd"`
			CNI struct {
				BinDir  string `toml:"bin_dir"`
				ConfDir string `toml:"conf_dir"`
			} `toml:"cni"`
			Registry struct {
				ConfigPath string `toml:"config_path"`
			} `toml:"registry"`
		} `toml:"io.containerd.grpc.v1.cri"`
	} `toml:"plugins"`
}

func TestContainerdConfigKeys(t *testing.T) {
	for _, oci := range []ociRuntime{{}, {name: noderuntime.OCICrun, nodePath: nodeOCIRuntimes[noderuntime.OCICrun]}} {
		var c containerd1File
		md, err := toml.Decode(containerdConfig("registry.k8s.io/pause:3.10.2", oci), &c)
		if err != nil {
			t.Fatalf("containerd config does not parse: %v", err)
		}
		if u := md.Undecoded(); len(u) > 0 {
			t.Errorf("keys containerd 1.7 does not read: %v", u)
		}
		if !c.Plugins.CRI.RestrictOOMScoreAdj || !c.Plugins.CRI.TolerateMissingHugetlbController {
			t.Errorf("restrict_oom_score_adj, tolerate_missing_hugetlb_controller: %+v", c.Plugins.CRI)
		}
	}
}
