package nodeimage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/gobuild"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/image"
)

// A node image's CRI runtime is Debian trixie's containerd 1.7 (installed
// in the base image) unless its Spec names another: noderuntime.CRIContainerd2
// is containerd 2.4, built from the Go module proxy like the Kubernetes
// binaries, with the node's runc (nodeRunc) as its OCI runtime and the
// same settings and runtime handlers as containerdConfig, in containerd
// 2's configuration layout (containerd2Config).

const (
	containerd2Module = "github.com/containerd/containerd/v2"
	// containerd2Version is the containerd 2 release the node images get:
	// the newest github.com/containerd/containerd/v2 the module proxy serves.
	containerd2Version = "v2.4.2"
)

// containerd2Tags are the build tags of containerd's Makefile at v2.4.2:
// GO_BUILDTAGS is "urfave_cli_no_docs", plus "osusergo netgo static_build"
// for STATIC=1 (the static release). With CGO_ENABLED=0 (gobuild.Env)
// cmd/containerd/builtins/btrfs_linux.go ("!no_btrfs && cgo") is left out
// by itself, as in the static release.
const containerd2Tags = "urfave_cli_no_docs osusergo netgo static_build"

// containerd2ShimTags are SHIM_GO_BUILDTAGS: the shim is built without the
// gRPC stubs of the containerd API ("no_grpc"; the shim speaks ttrpc).
const containerd2ShimTags = containerd2Tags + " no_grpc"

// containerd2LDFlags stamp the version as the Makefile's GO_LDFLAGS do
// (-X $(PKG)/version.Version=$(VERSION), PKG=github.com/containerd/containerd/v2;
// VERSION is `git describe`, "v2.4.2" for the release). The CRI Version
// call answers version.Version (internal/cri/server/version.go), which the
// kubelet reports as containerd://2.4.2; unstamped it would be
// "2.4.2+unknown". The module zip has no Git history, so version.Revision
// stays empty.
func containerd2LDFlags() string {
	pkg := containerd2Module + "/version"
	return "-s -w -X " + pkg + ".Version=" + containerd2Version + " -X " + pkg + ".Package=" + containerd2Module
}

// containerd2ProgramSets are the two builds of containerd 2's node binaries:
// the daemon and ctr with the Makefile's tags, the runc shim with the
// shim's tags (so one go build each).
func containerd2ProgramSets() []gobuild.ProgramSet {
	cmd := containerd2Module + "/cmd/"
	return []gobuild.ProgramSet{{
		Module:   containerd2Module,
		Version:  containerd2Version,
		Programs: map[string]string{"containerd": cmd + "containerd", "ctr": cmd + "ctr"},
		LDFlags:  containerd2LDFlags(),
		Tags:     containerd2Tags,
	}, {
		Module:   containerd2Module,
		Version:  containerd2Version,
		Programs: map[string]string{"containerd-shim-runc-v2": cmd + "containerd-shim-runc-v2"},
		LDFlags:  containerd2LDFlags(),
		Tags:     containerd2ShimTags,
	}}
}

// containerd2Programs are the binaries a containerd 2 node gets, in
// /usr/local/bin (where the base image links Debian's containerd 1.7
// binaries; kind's containerd.service runs /usr/local/bin/containerd).
var containerd2Programs = []string{"containerd", "containerd-shim-runc-v2", "ctr"}

// containerd2Binaries builds (or finds in the build cache) containerd
// containerd2Version's containerd, containerd-shim-runc-v2 and ctr: static
// (CGO_ENABLED=0), from the module proxy, and returns the path of each by
// name.
func containerd2Binaries(ctx context.Context, p gobuild.Progress) (map[string]string, error) {
	paths := map[string]string{}
	for _, s := range containerd2ProgramSets() {
		dir, err := gobuild.Build(ctx, p, s)
		if err != nil {
			return nil, fmt.Errorf("building containerd %s: %w", containerd2Version, err)
		}
		for n := range s.Programs {
			paths[n] = filepath.Join(dir, n)
		}
	}
	for _, n := range containerd2Programs {
		if paths[n] == "" {
			return nil, fmt.Errorf("building containerd %s: no %s", containerd2Version, n)
		}
	}
	return paths, nil
}

// addContainerd2 puts containerd 2 into a node's files: its binaries
// (bins, from containerd2Binaries) in place of the base image's links to
// Debian's, and its configuration in place of containerdConfig.
func addContainerd2(files *image.LayerBuilder, bins map[string]string, pause string, oci ociRuntime) *image.LayerBuilder {
	for _, n := range containerd2Programs {
		files = files.File("/usr/local/bin/"+n, bins[n], 0o755)
	}
	return files.Data("/etc/containerd/config.toml", []byte(containerd2Config(pause, oci)), 0o644)
}

// containerd2Config is containerdConfig for containerd 2.4: the same
// settings in the layout of configuration version 4, the version
// containerd 2.4 writes (version/version.go: ConfigVersion = 4; 3 in 2.1
// and 2.2, which refuse a 4). Version 2's plugins."io.containerd.grpc.v1.cri"
// table is split in containerd 2 (a version-2 file is migrated in memory,
// with a warning; cmd/containerd/server/config/config.go, LoadConfigWithPlugins):
//
//   - plugins."io.containerd.cri.v1.images" (plugins/cri/images/plugin.go,
//     configMigration): snapshotter and discard_unpacked_layers (from
//     .containerd), the registry table, and sandbox_image, which became
//     pinned_images.sandbox (internal/cri/config/config.go, ImageConfig);
//   - plugins."io.containerd.cri.v1.runtime" (plugins/cri/runtime/plugin.go,
//     configMigration): the rest, RuntimeConfig: the containerd table with
//     default_runtime_name and the runtimes, restrict_oom_score_adj,
//     tolerate_missing_hugetlb_controller (true by default, config_unix.go
//     DefaultRuntimeConfig), and the cni table, whose bin_dir became
//     bin_dirs, a list.
//
// Each runtime's keys (runtime_type, base_runtime_spec, options.BinaryName,
// options.SystemdCgroup) are those of version 2; the default handler's
// BinaryName is the node's OCI runtime oci (runc unless the worker names
// another), named here instead of found on PATH, and a handler of oci's
// name runs it too when it is not runc.
func containerd2Config(pause string, oci ociRuntime) string {
	const rt = `plugins."io.containerd.cri.v1.runtime"`
	var b strings.Builder
	b.WriteString(`# written by skewproof
version = 4

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  discard_unpacked_layers = true

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "` + pause + `"

[plugins."io.containerd.cri.v1.images".registry]
  config_path = "/etc/containerd/certs.d"

[` + rt + `]
  tolerate_missing_hugetlb_controller = true
  restrict_oom_score_adj = true

[` + rt + `.containerd]
  default_runtime_name = "runc"

`)
	addRuntime := func(handler, comment, binary string) {
		t := rt + ".containerd.runtimes." + handler
		b.WriteString(comment)
		fmt.Fprintf(&b, "[%s]\n  runtime_type = \"io.containerd.runc.v2\"\n  base_runtime_spec = \"/etc/containerd/cri-base.json\"\n", t)
		fmt.Fprintf(&b, "  [%s.options]\n    SystemdCgroup = true\n    BinaryName = %q\n\n", t, binary)
	}
	if oci.nodePath == "" {
		oci = ociRuntime{name: noderuntime.OCIRunc, nodePath: nodeRunc}
	}
	addRuntime("runc", "", oci.nodePath)
	if oci.name != noderuntime.OCIRunc {
		addRuntime(oci.name, "# The node's OCI runtime, "+oci.name+", also under its own name.\n", oci.nodePath)
	}
	addRuntime("test-handler", "", nodeRunc)
	for _, r := range restrictedRuntimes {
		addRuntime(r.handler, fmt.Sprintf("# A runtime without %s support: its runtime deletes %s from the OCI spec.\n", r.lacks, r.field), r.binary)
	}
	b.WriteString(`[` + rt + `.cni]
  bin_dirs = ["/opt/cni/bin"]
  conf_dir = "/etc/cni/net.d"
`)
	return b.String()
}
