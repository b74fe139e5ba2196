package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/gobuild"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/image"
)

// A CRI-O node (Spec.Runtime.CRI = noderuntime.CRICRIO) runs CRI-O
// (crioVersion, built from the Go module proxy with cgo and the host's
// libseccomp) with Debian trixie's conmon, and pinns built from CRI-O's own
// module, instead of containerd. kind creates and joins it like any worker:
// CRI-O listens on the socket kind's kubeadm configuration names for
// containerd (crioListen), and containerd's unit is masked. What differs
// from a stock kind node, all in this file:
//
//   - images: kind imports a node's images into containerd when it builds
//     the image (ctr import); containers-storage cannot be written on the
//     overlay file system of a build container, so a CRI-O node carries the
//     images as an archive (crioImagesArchive) and a unit before CRI-O's
//     copies them into containers-storage with skopeo at the node's first
//     boot (crioImagesUnit), on the node's /var volume;
//   - every runtime handler's binary is a wrapper (crioRuntimeWrapper) that
//     takes out of the OCI spec what this host cannot grant, as containerd
//     does itself or by a setting and CRI-O has no setting for: capabilities
//     outside the node's bounding set, an oomScoreAdj below its own (the
//     kubelet asks for -997 for node-critical pods, which a host without
//     CAP_SYS_RESOURCE cannot grant), and on cgroup v1 hugetlb limits;
//   - kind's createContainer hook (product_uuid) is containerd's base
//     runtime spec, which CRI-O does not read: CRI-O's containers see the
//     node's product files.

const (
	crioModule = "github.com/cri-o/cri-o"
	// crioVersion is the CRI-O release the node images get: the newest
	// github.com/cri-o/cri-o the module proxy serves (v1.35.0 is not).
	crioVersion = "v1.34.0"
)

// crioTags are the BUILDTAGS CRI-O's Makefile (v1.34.0) chooses on a host
// with libseccomp's headers and without those of btrfs, libapparmor,
// libselinux and libsubid ("containers_image_ostree_stub", then
// hack/apparmor_tag.sh … hack/libsubid_tag.sh), except two:
// "containers_image_openpgp" (signature checks in Go instead of gpgme: no
// image is pulled here) and "apparmor", which CRI-O's AppArmor support
// needs (internal/config/apparmor/apparmor_linux.go, "linux && apparmor";
// containers/common's pkg/apparmor is plain Go and reads the kernel's
// securityfs, no libapparmor).
const crioTags = "containers_image_openpgp containers_image_ostree_stub exclude_graphdriver_btrfs btrfs_noversion seccomp apparmor"

// crioProgramSet is CRI-O's daemon. Its version is a constant in the source
// (internal/version/version.go, Version = "1.34.0"), which the CRI Version
// call answers and the kubelet reports as cri-o://1.34.0. cgo: the seccomp
// tag links libseccomp (github.com/seccomp/libseccomp-golang). Its go.sum
// seeds the build's: some of its pseudo-versions are not in the checksum
// database the proxy serves.
func crioProgramSet() gobuild.ProgramSet {
	return gobuild.ProgramSet{
		Module:     crioModule,
		Version:    crioVersion,
		Programs:   map[string]string{"crio": crioModule + "/cmd/crio"},
		LDFlags:    "-s -w",
		Tags:       crioTags,
		CGO:        true,
		ModuleSums: true,
	}
}

// pinnsCFlags are pinns/Makefile's CFLAGS (v1.34.0) and its object rule's
// -O3; the binary is static, as there.
const pinnsCFlags = "-std=c99 -Os -Wall -Werror -Wextra -static -O3"

// crioBinaries builds (or finds in the cache) crio and pinns and returns
// the path of each by name.
func crioBinaries(ctx context.Context, p gobuild.Progress) (map[string]string, error) {
	s := crioProgramSet()
	dir, err := gobuild.Build(ctx, p, s)
	if err != nil {
		return nil, fmt.Errorf("building CRI-O %s: %w", crioVersion, err)
	}
	pinns, err := buildPinns(ctx, p)
	if err != nil {
		return nil, err
	}
	return map[string]string{"crio": filepath.Join(dir, "crio"), "pinns": pinns}, nil
}

// buildPinns compiles CRI-O's pinns (C, in the module's pinns/src) with the
// host's C compiler, as pinns/Makefile does, into the cache.
func buildPinns(ctx context.Context, p gobuild.Progress) (string, error) {
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cacheDir, "bin", "pinns-"+crioVersion+"-"+cache.Key("pinns", crioModule, crioVersion, pinnsCFlags))
	if cache.Complete(dst) {
		return filepath.Join(dst, "pinns"), nil
	}
	src, err := gobuild.ModuleDir(ctx, crioModule, crioVersion)
	if err != nil {
		return "", fmt.Errorf("building pinns: %w", err)
	}
	sources, err := filepath.Glob(filepath.Join(src, "pinns", "src", "*.c"))
	if err != nil || len(sources) == 0 {
		return "", fmt.Errorf("building pinns: no C sources in %s/pinns/src", src)
	}
	err = cache.AtomicDir(ctx, dst, p.Step, func(tmp string) error {
		return p.Timed("cc pinns ("+crioVersion+")", func() error {
			out := filepath.Join(tmp, "pinns")
			args := append(strings.Fields(pinnsCFlags), "-o", out)
			if err := command.Run(ctx, tmp, os.Environ(), "cc", append(args, sources...)...); err != nil {
				return fmt.Errorf("building pinns (CRI-O %s) with the host's C compiler (hack/setup-host.sh installs gcc and libc6-dev): %w", crioVersion, err)
			}
			return command.Run(ctx, tmp, os.Environ(), "strip", "-s", out)
		})
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dst, "pinns"), nil
}

// Paths in a CRI-O node.
const (
	CRIOBinary  = "/usr/local/bin/crio"
	pinnsBinary = "/usr/local/bin/pinns"
	// crioListen is the socket kind's kubeadm configuration gives the
	// kubelet (criSocket, unix:///run/containerd/containerd.sock), so kind
	// joins a CRI-O node unchanged.
	crioListen = "/run/containerd/containerd.sock"
	// crioImagesArchive holds the node's images ("docker save" format);
	// crioImageTags lists their tags, one per line.
	crioImagesArchive = "/kind/skewproof/images.tar"
	crioImageTags     = "/kind/skewproof/image-tags"
	crioWrapperDir    = "/usr/local/libexec/skewproof/crio"
	conmonBinary      = "/usr/bin/conmon"
)

// crioHandler is one runtime handler of a CRI-O node: its name and the OCI
// runtime its wrapper runs, after deleting drop (a jq path; "" for none)
// from the OCI spec.
type crioHandler struct {
	name, runtime, drop, lacks string
}

// crioHandlers are the handlers of containerdConfig, in CRI-O: "runc" runs
// the node's OCI runtime oci (the default handler, as containerd's), a
// handler of oci's name runs it too when it is not runc, "test-handler"
// runs the node's runc, and the restricted handlers drop their setting
// before oci runs.
func crioHandlers(oci ociRuntime) []crioHandler {
	if oci.nodePath == "" {
		oci = ociRuntime{name: noderuntime.OCIRunc, nodePath: nodeRunc}
	}
	hs := []crioHandler{{name: "runc", runtime: oci.nodePath}}
	if oci.name != noderuntime.OCIRunc {
		hs = append(hs, crioHandler{name: oci.name, runtime: oci.nodePath})
	}
	hs = append(hs, crioHandler{name: "test-handler", runtime: nodeRunc})
	for _, r := range restrictedRuntimes {
		hs = append(hs, crioHandler{name: r.handler, runtime: oci.nodePath, drop: r.field, lacks: r.lacks})
	}
	return hs
}

func (h crioHandler) wrapper() string { return crioWrapperDir + "/" + h.name }

// crioRuntimeWrapper is h's binary. Before "create" and "run" (the
// bundle's OCI spec) and "exec" (the process file) it takes out of the
// spec what this host cannot grant, where containerd does so itself or by
// a setting on the other nodes and CRI-O has no setting, then execs
// h.runtime:
//
//   - capabilities outside its own bounding set: CRI-O gives a privileged
//     container every capability it knows (on a host whose bounding set
//     lacks CAP_SYS_RESOURCE, "capset: Operation not permitted"), containerd
//     those of its own process (WithAllCurrentCapabilities);
//   - .process.oomScoreAdj below its own is raised to its own (conmon runs
//     it, with CRI-O's): containerd's restrict_oom_score_adj;
//   - on cgroup v1, .linux.resources.hugepageLimits: containerd 1.7 and 2.x
//     set none by default (disable_hugetlb_controller = true); CRI-O 1.34
//     sets them wherever the controller exists (internal/config/node/
//     cgroups_linux.go CgroupHasHugetlb), systemd manages no hugetlb
//     hierarchy on cgroup v1 so a scope has no directory there, and crun
//     1.21's systemd driver joins the scope's "container" subgroup of every
//     hierarchy without making it (libcrun/cgroup-systemd.c,
//     systemd_finalize): every container failed with "open
//     /sys/fs/cgroup/hugetlb/…/container: No such file or directory";
//
// and, for the restricted handlers, h.drop.
func crioRuntimeWrapper(h crioHandler) string {
	spec := `(.process.capabilities |= (if . == null then . else ` + capFilter + ` end))
	| (if (.process.oomScoreAdj // $min) < $min then .process.oomScoreAdj = $min else . end)
	| (if $v1 then del(.linux.resources.hugepageLimits) else . end)`
	what := filepath.Base(h.runtime) + " for CRI-O, what this host cannot grant taken out of the OCI spec"
	if h.drop != "" {
		spec += "\n\t| del(" + h.drop + ")"
		what += ", without " + h.lacks + " support (deletes " + h.drop + ")"
	}
	return specEditingRuntime(what, spec, `.capabilities |= (if . == null then . else `+capFilter+` end)`, h.runtime)
}

// capFilter keeps, in every list of an OCI capabilities object, the
// capabilities not in $m.
const capFilter = `with_entries(.value |= (if type == "array" then map(select(. as $c | $m | index($c) | not)) else . end))`

// crioConfig is the node's CRI-O drop-in: the socket kind expects, the
// handlers (crioHandlers), the preloaded pause image, images pinned (as
// containerd's are: every image skewproof puts on a node is under
// registry.k8s.io/ or skewproof.local/; a lone "*" panics in v1.34.0's
// internal/storage/image.go CompileRegexpsForPinnedImages), and CNI where
// kind's other nodes have it.
func crioConfig(pause string, oci ociRuntime) string {
	var b strings.Builder
	b.WriteString(`# written by skewproof
[crio]
storage_driver = "overlay"

[crio.api]
listen = "` + crioListen + `"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "systemd"
pinns_path = "` + pinnsBinary + `"

`)
	for _, h := range crioHandlers(oci) {
		fmt.Fprintf(&b, "[crio.runtime.runtimes.%s]\n  runtime_path = %q\n  runtime_type = \"oci\"\n  runtime_root = %q\n  monitor_path = %q\n  monitor_cgroup = \"pod\"\n\n",
			h.name, h.wrapper(), "/run/crio-runtimes/"+h.name, conmonBinary)
	}
	b.WriteString(`[crio.image]
pause_image = "` + pause + `"
pinned_images = ["registry.k8s.io/*", "skewproof.local/*"]
signature_policy = "/etc/containers/policy.json"

[crio.network]
network_dir = "/etc/cni/net.d/"
plugin_dirs = ["/opt/cni/bin/"]
`)
	return b.String()
}

// crioStorageConfig is containers-storage's configuration, shared by CRI-O
// and skopeo: overlay on the node's /var volume.
const crioStorageConfig = `# written by skewproof
[storage]
driver = "overlay"
graphroot = "/var/lib/containers/storage"
runroot = "/run/containers/storage"
`

// crioRegistries resolves short names as the kubelet and containerd do
// (docker.io) and blocks the registries the cluster's images name: the
// images are preloaded and no pull may leave the node.
const crioRegistries = `# written by skewproof: images are preloaded; no pull may leave the node
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"

[[registry]]
location = "docker.io"
blocked = true

[[registry]]
location = "registry.k8s.io"
blocked = true

[[registry]]
location = "skewproof.local"
blocked = true

[[registry]]
location = "localhost"
blocked = true
`

// crioPolicy accepts any image: nothing is pulled, the preloaded images
// are copied from the node's own archive.
const crioPolicy = `{"default": [{"type": "insecureAcceptAnything"}]}
`

// crioUnit runs CRI-O after the images are in its storage. The directory
// of its socket is containerd's, which nothing else makes on this node.
const crioUnit = `# written by skewproof
[Unit]
Description=CRI-O (skewproof node)
After=network-online.target skewproof-crio-images.service
Requires=skewproof-crio-images.service

[Service]
Type=notify
ExecStartPre=/bin/mkdir -p /run/containerd
ExecStart=` + CRIOBinary + `
Restart=on-failure
RestartSec=1s
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
Delegate=yes
KillMode=process

[Install]
WantedBy=multi-user.target
`

// crioImagesUnit copies the node's images into containers-storage, once
// (the mark is on the node's /var volume).
const crioImagesUnit = `# written by skewproof
[Unit]
Description=skewproof: the node's images into CRI-O's storage
ConditionPathExists=!/var/lib/containers/skewproof-images-loaded

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/kind/skewproof/load-images.sh

[Install]
WantedBy=multi-user.target
`

const crioLoadImagesScript = `#!/bin/sh
# written by skewproof: the node's images into containers-storage
set -eu
while read -r tag; do
	[ -n "$tag" ] || continue
	skopeo copy --quiet "docker-archive:` + crioImagesArchive + `:$tag" "containers-storage:$tag"
done < ` + crioImageTags + `
touch /var/lib/containers/skewproof-images-loaded
`

// addCRIO puts CRI-O into a node's files (bins from crioBinaries): its
// binaries, configuration, units and handler wrappers, the node's images
// (archive, with tags) to load at boot, and containerd's unit masked.
func addCRIO(files *image.LayerBuilder, bins map[string]string, pause string, oci ociRuntime, archive string, tags []string) *image.LayerBuilder {
	files = files.
		File(CRIOBinary, bins["crio"], 0o755).
		File(pinnsBinary, bins["pinns"], 0o755).
		Data("/etc/crio/crio.conf.d/10-skewproof.conf", []byte(crioConfig(pause, oci)), 0o644).
		Data("/etc/containers/storage.conf", []byte(crioStorageConfig), 0o644).
		Data("/etc/containers/registries.conf", []byte(crioRegistries), 0o644).
		Data("/etc/containers/policy.json", []byte(crioPolicy), 0o644).
		Data("/etc/systemd/system/crio.service", []byte(crioUnit), 0o644).
		Data("/etc/systemd/system/skewproof-crio-images.service", []byte(crioImagesUnit), 0o644).
		Symlink("/etc/systemd/system/multi-user.target.wants/crio.service", "/etc/systemd/system/crio.service").
		Symlink("/etc/systemd/system/multi-user.target.wants/skewproof-crio-images.service", "/etc/systemd/system/skewproof-crio-images.service").
		Symlink("/etc/systemd/system/containerd.service", "/dev/null").
		Data("/kind/skewproof/load-images.sh", []byte(crioLoadImagesScript), 0o755).
		Data(crioImageTags, []byte(strings.Join(tags, "\n")+"\n"), 0o644).
		File(crioImagesArchive, archive, 0o644)
	for _, h := range crioHandlers(oci) {
		files = files.Data(h.wrapper(), []byte(crioRuntimeWrapper(h)), 0o755)
	}
	return files
}

// crioKeyParts are the inputs of a CRI-O node image besides the common
// ones (nodeImageRef).
func crioKeyParts(oci ociRuntime) []string {
	parts := []string{"cri", noderuntime.CRICRIO, crioConfig("", oci), crioStorageConfig, crioRegistries, crioPolicy, crioUnit, crioImagesUnit, crioLoadImagesScript, pinnsCFlags, crioProgramSet().Key()}
	for _, h := range crioHandlers(oci) {
		parts = append(parts, crioRuntimeWrapper(h))
	}
	return parts
}
