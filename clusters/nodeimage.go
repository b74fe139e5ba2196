package clusters

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	senv "github.com/skewproof/skewproof/suites/env"
)

// NodeImageSpec names what goes into a node image.
type NodeImageSpec struct {
	// ControlPlane is the Kubernetes version of the control plane: kubeadm,
	// kubectl and every image kubeadm schedules come from it.
	ControlPlane string
	// Kubelet is the kubelet version of the node (defaults to ControlPlane).
	Kubelet string
}

func (s NodeImageSpec) kubelet() string {
	if s.Kubelet == "" {
		return s.ControlPlane
	}
	return s.Kubelet
}

// IsControlPlane reports whether the image is for a control-plane node
// (kubelet at the control-plane version), which also holds the images of the
// control-plane components.
func (s NodeImageSpec) IsControlPlane() bool { return trimV(s.kubelet()) == trimV(s.ControlPlane) }

// Tag is the human part of the image name.
func (s NodeImageSpec) Tag() string {
	if s.IsControlPlane() {
		return "v" + trimV(s.ControlPlane)
	}
	return "v" + trimV(s.ControlPlane) + "-kubelet-v" + trimV(s.kubelet())
}

// BuildContainerPrefix starts the name of the temporary containers that
// node images are assembled in.
const BuildContainerPrefix = "skewproof-build-"

// nodeImageRevision changes whenever the node-image assembly changes.
const nodeImageRevision = "2"

// NodeImageRepo is the repository of the node images skewproof builds.
const NodeImageRepo = "skewproof-node"

// containerdConfig is the node's containerd configuration: kind's, with
// restrict_oom_score_adj (the kubelet asks for -998 on every sandbox, which a
// host without CAP_SYS_RESOURCE cannot grant), the sandbox image that is
// preloaded, the restricted runtime handlers (restrictedRuntimes), and a
// registry configuration that sends every pull to a closed loopback port, so
// no pull can leave the node.
func containerdConfig(pause string) string {
	return `# written by skewproof
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "` + pause + `"
  tolerate_missing_hugepages_controller = true
  restrict_oom_score_adj = true

[plugins."io.containerd.grpc.v1.cri".containerd]
  discard_unpacked_layers = true
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
  runtime_type = "io.containerd.runc.v2"
  base_runtime_spec = "/etc/containerd/cri-base.json"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
    SystemdCgroup = true

` + restrictedRuntimesConfig() + `[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/opt/cni/bin"
  conf_dir = "/etc/cni/net.d"

[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
`
}

// closedRegistryHosts makes every registry resolve to a closed loopback port.
const closedRegistryHosts = `# written by skewproof: images are preloaded; no pull may leave the node
server = "http://127.0.0.1:1"

[host."http://127.0.0.1:1"]
  capabilities = ["pull", "resolve"]
`

// Runtime handlers of every node image whose OCI runtime drops one
// security setting from the container's OCI spec before runc sees it: the
// "runtime without seccomp support" rows of KEP-135's failure table and the
// "runtime without AppArmor support" row of KEP-24's. A RuntimeClass with
// the handler's name selects one.
const (
	NoSeccompHandler  = "skewproof-noseccomp"
	NoAppArmorHandler = "skewproof-noapparmor"
)

// RestrictedRuntimeHandlers are the handlers above, in a stable order.
func RestrictedRuntimeHandlers() []string {
	hs := make([]string, len(restrictedRuntimes))
	for i, r := range restrictedRuntimes {
		hs[i] = r.handler
	}
	return hs
}

// iptablesModeWrapper stands for iptables, ip6tables and their -save and
// -restore in kube-proxy's image: it runs the nf_tables variant when the
// kernel has nf_tables and the legacy one otherwise (the User-Mode Linux
// kernel of an AppArmor node has no nf_tables), deciding once per container
// like the iptables-wrapper of upstream's kube-proxy image.
const iptablesModeWrapper = `#!/bin/sh
# written by skewproof: iptables in the mode this kernel supports
name=${0##*/}
fam=${name%%-*}
case "$name" in *-save) op=-save ;; *-restore) op=-restore ;; *) op= ;; esac
f=/tmp/.skewproof-iptables-mode
mode=
[ -f "$f" ] && read -r mode < "$f"
if [ -z "$mode" ]; then
	probe=SKEWPROOF-PROBE-$$
	if /usr/sbin/iptables-nft -w -t mangle -N "$probe" 2>/dev/null; then
		/usr/sbin/iptables-nft -w -t mangle -X "$probe"
		mode=nft
	else
		mode=legacy
	fi
	echo "$mode" > "$f"
fi
exec "/usr/sbin/$fam-$mode$op" "$@"
`

// iptablesWrapperLayer writes the layer that puts iptablesModeWrapper in
// place of the six iptables commands kube-proxy runs.
func iptablesWrapperLayer(dst string) (layerFile, error) {
	l := newLayer().Data("/usr/sbin/skewproof-iptables-wrapper", []byte(iptablesModeWrapper), 0o755)
	for _, fam := range []string{"iptables", "ip6tables"} {
		for _, op := range []string{"", "-save", "-restore"} {
			l.Symlink("/usr/sbin/"+fam+op, "skewproof-iptables-wrapper")
		}
	}
	return l.WriteTo(dst)
}

// restrictedRuntime is one of those handlers: its containerd runtime is
// binary, a wrapper around runc that deletes field (a jq path) from the
// bundle's config.json.
type restrictedRuntime struct {
	handler, binary, field, lacks string
}

var restrictedRuntimes = []restrictedRuntime{
	{handler: NoSeccompHandler, binary: "/usr/local/sbin/runc-no-seccomp", field: ".linux.seccomp", lacks: "seccomp"},
	{handler: NoAppArmorHandler, binary: "/usr/local/sbin/runc-no-apparmor", field: ".process.apparmorProfile", lacks: "AppArmor"},
}

// nodeRunc is the runc of the node images.
const nodeRunc = "/usr/local/sbin/runc"

// script is the wrapper's text.
func (r restrictedRuntime) script() string { return fieldDroppingRuntime(r.field, r.lacks, nodeRunc) }

// fieldDroppingRuntime is an OCI runtime that, on "create" and "run",
// deletes field from the bundle's config.json and then execs runc with the
// same arguments.
func fieldDroppingRuntime(field, lacks, runc string) string {
	return `#!/bin/sh
# written by skewproof: runc without ` + lacks + ` support (deletes ` + field + ` from the OCI spec)
bundle=.
sub=
prev=
for a in "$@"; do
	case "$prev" in --bundle|-b) bundle=$a ;; esac
	case "$a" in --bundle=*) bundle=${a#--bundle=} ;; create|run) [ -z "$sub" ] && sub=$a ;; esac
	prev=$a
done
if [ -n "$sub" ] && [ -f "$bundle/config.json" ]; then
	jq 'del(` + field + `)' "$bundle/config.json" > "$bundle/config.json.skewproof" && mv "$bundle/config.json.skewproof" "$bundle/config.json"
fi
exec ` + runc + ` "$@"
`
}

// restrictedRuntimesConfig is the containerd configuration of the handlers.
func restrictedRuntimesConfig() string {
	var b strings.Builder
	for _, r := range restrictedRuntimes {
		t := `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.` + r.handler + `]`
		fmt.Fprintf(&b, "# A runtime without %s support: its runtime deletes %s from the OCI spec.\n", r.lacks, r.field)
		fmt.Fprintf(&b, "%s\n  runtime_type = \"io.containerd.runc.v2\"\n  base_runtime_spec = \"/etc/containerd/cri-base.json\"\n", t)
		fmt.Fprintf(&b, "  %s.options]\n    SystemdCgroup = true\n    BinaryName = %q\n\n", strings.TrimSuffix(t, "]"), r.binary)
	}
	return b.String()
}

const defaultStorageManifest = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
`

// BuildNodeImage builds (or finds in the cache) the node image for spec and
// returns its reference.
func BuildNodeImage(ctx context.Context, p *Progress, spec NodeImageSpec) (string, error) {
	base, err := BuildBase(ctx, p)
	if err != nil {
		return "", err
	}
	cp, kl := "v"+trimV(spec.ControlPlane), "v"+trimV(spec.kubelet())
	parts := []string{"node", nodeImageRevision, base.Key, cp, kl, containerdConfig(""), closedRegistryHosts, defaultStorageManifest, iptablesModeWrapper}
	for _, r := range restrictedRuntimes {
		parts = append(parts, r.binary, r.script())
	}
	key := imageKey(parts...)
	ref := NodeImageRepo + ":" + spec.Tag() + "-" + key
	if imageExists(ctx, ref) {
		p.Step("node image %s: cached", ref)
		return ref, nil
	}
	p.Step("building node image %s", ref)
	cpNames := []string{"kubeadm", "kubectl", "kubelet", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}
	cpBin, err := KubernetesBinaries(ctx, p, cp, cpNames...)
	if err != nil {
		return "", err
	}
	kubeletPath := filepath.Join(cpBin, "kubelet")
	if !spec.IsControlPlane() {
		klBin, err := KubernetesBinaries(ctx, p, kl, "kubelet")
		if err != nil {
			return "", err
		}
		kubeletPath = filepath.Join(klBin, "kubelet")
	}
	refs, err := kubeadmImages(ctx, filepath.Join(cpBin, "kubeadm"), cp)
	if err != nil {
		return "", err
	}
	cache, err := senv.ResolveCacheDir()
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(cache, ".node-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)

	var images []imageSpec
	var pause string
	for _, r := range refs {
		var img imageSpec
		switch r.Name {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			if !spec.IsControlPlane() {
				continue
			}
			img, err = binaryImage(work, r.Full, filepath.Join(cpBin, r.Name), "/usr/local/bin/"+r.Name, nil)
		case "kube-proxy":
			var wrapper layerFile
			if wrapper, err = iptablesWrapperLayer(filepath.Join(work, "iptables-wrapper.tar")); err == nil {
				img, err = binaryImage(work, r.Full, filepath.Join(cpBin, r.Name), "/usr/local/bin/"+r.Name, nil, base.ToolsLayer, wrapper)
			}
		case "etcd":
			if !spec.IsControlPlane() {
				continue
			}
			var dir string
			if dir, err = etcdBinary(ctx, p, r.Tag); err == nil {
				img, err = binaryImage(work, r.Full, filepath.Join(dir, "etcd"), "/usr/local/bin/etcd", nil)
			}
		case "coredns":
			var dir string
			if dir, err = corednsBinary(ctx, p, r.Tag); err == nil {
				img, err = binaryImage(work, r.Full, filepath.Join(dir, "coredns"), "/coredns", []string{"/coredns"})
			}
		case "pause":
			var dir string
			pause = r.Full
			if dir, err = pauseBinary(ctx, p); err == nil {
				img, err = binaryImage(work, r.Full, filepath.Join(dir, "pause"), "/pause", []string{"/pause"})
			}
		default:
			return "", fmt.Errorf("kubeadm %s asks for image %s, which skewproof cannot build", cp, r.Full)
		}
		if err != nil {
			return "", fmt.Errorf("building image %s: %w", r.Full, err)
		}
		images = append(images, img)
	}
	if pause == "" {
		return "", fmt.Errorf("kubeadm %s listed no pause image", cp)
	}
	bbRef, err := e2eBusyBoxRef(ctx, cp)
	if err != nil {
		return "", err
	}
	images = append(images, imageSpec{Tags: []string{bbRef, BusyBoxImage}, Layers: []layerFile{base.BusyBox}, Cmd: []string{"sh"},
		Labels: map[string]string{"io.skewproof.image": "test"}})

	// Files added to the base: binaries, version, containerd configuration.
	files := newLayer().
		File("/usr/bin/kubeadm", filepath.Join(cpBin, "kubeadm"), 0o755).
		File("/usr/bin/kubectl", filepath.Join(cpBin, "kubectl"), 0o755).
		File("/usr/bin/kubelet", kubeletPath, 0o755).
		Data("/kind/version", []byte(cp+"\n"), 0o644).
		Data("/kind/skewproof-kubelet-version", []byte(kl+"\n"), 0o644).
		Data("/kind/manifests/default-storage.yaml", []byte(defaultStorageManifest), 0o644).
		Data("/etc/containerd/config.toml", []byte(containerdConfig(pause)), 0o644).
		Data("/etc/containerd/certs.d/_default/hosts.toml", []byte(closedRegistryHosts), 0o644)
	for _, r := range restrictedRuntimes {
		files = files.Data(r.binary, []byte(r.script()), 0o755)
	}
	filesTar, err := files.WriteTo(filepath.Join(work, "files.tar"))
	if err != nil {
		return "", err
	}
	archive := filepath.Join(work, "images.tar")
	f, err := os.Create(archive)
	if err != nil {
		return "", err
	}
	if err := writeImageArchive(f, images); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := p.Timed("assembling node image "+ref, func() error {
		return assembleNodeImage(ctx, base.Ref, ref, filesTar.Path, archive, images)
	}); err != nil {
		return "", fmt.Errorf("building node image %s: %w", ref, err)
	}
	return ref, nil
}

// stopContainerdScript stops the build container's containerd and waits
// until it has exited; the process is re-parented to "sleep", which never
// reaps it, so a zombie counts as stopped.
const stopContainerdScript = `pkill -x containerd
for i in $(seq 1 100); do
	alive=
	for p in $(pgrep -x containerd); do
		[ "$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)" = Z ] || alive=1
	done
	[ -z "$alive" ] && exit 0
	sleep 0.2
done
echo "containerd did not stop" >&2
exit 1`

// assembleNodeImage does what kind's node-image build does: a container
// from the base image receives the files, its containerd imports the images
// (pinned, not unpacked), and the container is committed as the node image.
func assembleNodeImage(ctx context.Context, baseRef, ref, filesTar, archive string, images []imageSpec) error {
	name := fmt.Sprintf("%s%d", BuildContainerPrefix, time.Now().UnixNano())
	if _, err := docker(ctx, "run", "-d", "--name", name,
		"--privileged", "--security-opt", "seccomp=unconfined", "--entrypoint=sleep", baseRef, "infinity"); err != nil {
		return err
	}
	// Removed with a fresh context: this must happen on interrupt too.
	defer docker(context.Background(), "rm", "-f", "-v", name)
	ft, err := os.Open(filesTar)
	if err != nil {
		return err
	}
	_, err = dockerIn(ctx, ft, "cp", "-", name+":/")
	ft.Close()
	if err != nil {
		return err
	}
	if _, err := docker(ctx, "exec", name, "sh", "-c", "nohup containerd >/tmp/containerd.log 2>&1 &"); err != nil {
		return err
	}
	ready := false
	for i := 0; i < 60 && !ready; i++ {
		if _, err := docker(ctx, "exec", name, "ctr", "version"); err == nil {
			ready = true
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !ready {
		log, _ := docker(ctx, "exec", name, "cat", "/tmp/containerd.log")
		return fmt.Errorf("containerd did not start in the build container: %s", tail(log, 10))
	}
	af, err := os.Open(archive)
	if err != nil {
		return err
	}
	_, err = dockerIn(ctx, af, "exec", "-i", name, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack", "--digests", "--all-platforms", "-")
	af.Close()
	if err != nil {
		return err
	}
	for _, img := range images {
		for _, t := range img.Tags {
			if _, err := docker(ctx, "exec", name, "ctr", "-n", "k8s.io", "images", "label", t, "io.cri-containerd.pinned=pinned"); err != nil {
				return fmt.Errorf("image %s missing after import: %w", t, err)
			}
		}
	}
	if _, err := docker(ctx, "exec", name, "sh", "-c", stopContainerdScript); err != nil {
		return fmt.Errorf("stopping containerd in the build container: %w", err)
	}
	_, err = docker(ctx, "commit",
		"--change", `ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		"--change", `CMD []`,
		"--change", "LABEL io.skewproof.image=node",
		"--change", "LABEL io.skewproof.node-tag="+strings.SplitN(strings.TrimPrefix(ref, NodeImageRepo+":"), "-", 2)[0],
		name, ref)
	return err
}
