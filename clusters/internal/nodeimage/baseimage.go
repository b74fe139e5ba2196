package nodeimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/gobuild"
	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/image"
)

// The base image is what kind's base image holds (systemd, containerd, runc,
// CNI plugins, kind's entrypoint and units), made with debootstrap from
// Debian's packages instead of a registry image.

const (
	debianSuite  = "trixie"
	debianMirror = "http://deb.debian.org/debian"
	// kindModule is the module whose base-image files are used, at the
	// version go.mod requires (kindVersion; checked by a unit test).
	kindModule = "sigs.k8s.io/kind"
)

// basePackages are installed into the base root file system. containerd 1.7,
// runc and crun (the OCI runtimes a worker can have, Runtime) come from
// Debian; dbus is for crun, whose systemd cgroup driver talks to systemd
// over the system bus (libcrun/cgroup-systemd.c, open_sd_bus_connection:
// sd_bus_default_system, no fallback to /run/systemd/private as runc has); the kubelet falls back from the CRI
// RuntimeConfig call that containerd 1.7 lacks (cmd/kubelet/app/server.go,
// getCgroupDriverFromCRI) until v1.38. conmon (CRI-O's container monitor)
// and skopeo (which copies a CRI-O node's images into containers-storage at
// its first boot) are for CRI-O nodes (crio.go).
var basePackages = []string{
	"systemd", "dbus", "containerd", "runc", "crun", "containernetworking-plugins", "conmon", "skopeo",
	"iptables", "nftables", "conntrack", "iproute2", "ethtool", "util-linux", "mount", "kmod",
	"libseccomp2", "pigz", "jq", "procps", "e2fsprogs", "bash", "ca-certificates",
	"busybox-static", "apparmor",
}

// kindVersion returns the version of sigs.k8s.io/kind this binary is built with.
func kindVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == kindModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "v0.33.0"
}

// baseImage is the result of the base build: the Docker image and the
// layers extracted from its root file system for the component images.
type baseImage struct {
	Ref        string
	Key        string
	ToolsLayer image.Layer // iptables, nft, conntrack with their libraries (kube-proxy)
	BusyBox    image.Layer // busybox with its applet links (test image)
	Dir        string
}

const baseSetupScript = `set -e
find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
  /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
  /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service
mkdir -p /etc/systemd/system/sockets.target.wants && ln -sf /usr/lib/systemd/system/dbus.socket /etc/systemd/system/sockets.target.wants/dbus.socket
systemctl mask systemd-binfmt.service
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /usr/local/sbin /etc/containerd/certs.d
for b in containerd ctr containerd-shim-runc-v2; do ln -sf "$(command -v $b)" /usr/local/bin/$b; done
ln -sf "$(command -v runc)" /usr/local/sbin/runc
for p in /usr/lib/cni/*; do ln -sf "$p" /opt/cni/bin/; done
ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc/* /usr/share/man/* /usr/share/locale/* /var/log/*.log
busybox --list > /.busybox-applets
`

// toolsLibraries names how the tools layer gathers libraries (part of the
// base image's cache key): "2" adds those of the shared objects in listed
// directories.
const toolsLibraries = "2"

// toolsPaths are copied (with their shared libraries) into the layer that
// kube-proxy's image gets.
var toolsPaths = []string{
	"/usr/sbin/iptables", "/usr/sbin/iptables-save", "/usr/sbin/iptables-restore",
	"/usr/sbin/ip6tables", "/usr/sbin/ip6tables-save", "/usr/sbin/ip6tables-restore",
	"/usr/sbin/iptables-nft", "/usr/sbin/iptables-nft-save", "/usr/sbin/iptables-nft-restore",
	"/usr/sbin/ip6tables-nft", "/usr/sbin/ip6tables-nft-save", "/usr/sbin/ip6tables-nft-restore",
	"/usr/sbin/iptables-legacy", "/usr/sbin/iptables-legacy-save", "/usr/sbin/iptables-legacy-restore",
	"/usr/sbin/ip6tables-legacy", "/usr/sbin/ip6tables-legacy-save", "/usr/sbin/ip6tables-legacy-restore",
	"/usr/sbin/nft", "/usr/sbin/conntrack", "/usr/lib/x86_64-linux-gnu/xtables",
	"/bin/sh", "/usr/bin/busybox",
}

// baseImageOf names the base image and its cache entry, without building.
func baseImageOf() (*baseImage, error) {
	key := cache.Key("base", debianSuite, debianMirror, strings.Join(basePackages, ","), kindVersion(), baseSetupScript, strings.Join(toolsPaths, ","), toolsLibraries)
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return nil, err
	}
	return &baseImage{Ref: "skewproof-base:" + key, Key: key, Dir: filepath.Join(cacheDir, "base-"+key)}, nil
}

// buildBase builds (or finds in the cache) the base node image.
func buildBase(ctx context.Context, h command.Host) (*baseImage, error) {
	p := h.Progress
	b, err := baseImageOf()
	if err != nil {
		return nil, err
	}
	kindVer := kindVersion()
	kindDir, err := gobuild.ModuleDir(ctx, kindModule, kindVer)
	if err != nil {
		return nil, fmt.Errorf("reading kind's base-image files: %w", err)
	}
	cacheDir := filepath.Dir(b.Dir)
	layersOK := func() bool {
		var err1, err2 error
		b.ToolsLayer, err1 = image.DigestFile(filepath.Join(b.Dir, "tools.tar"))
		b.BusyBox, err2 = image.DigestFile(filepath.Join(b.Dir, "busybox.tar"))
		return err1 == nil && err2 == nil
	}
	// A base image written before images carried the host's architecture
	// says amd64 on any host: one of another architecture is built anew.
	cached := func() bool {
		return h.ImageExists(ctx, b.Ref) && layersOK() && h.ImageArchitecture(ctx, b.Ref) == image.Architecture
	}
	if cached() {
		p.Step("base image %s: cached", b.Ref)
		return b, nil
	}
	unlock, err := cache.Lock(ctx, b.Dir, p.Step)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cached() {
		p.Step("base image %s: built meanwhile by another process", b.Ref)
		return b, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("building the base image needs root (debootstrap, chroot); run as root or pass --node-image")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return nil, fmt.Errorf("debootstrap not found; run hack/setup-host.sh (or apt-get install debootstrap)")
	}
	work, err := buildDir(cacheDir, ".base-build-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	root := filepath.Join(work, "rootfs")
	if err := p.Timed("debootstrap "+debianSuite+" (base root file system)", func() error {
		return command.Run(ctx, work, os.Environ(), "debootstrap", "--variant=minbase",
			"--include="+strings.Join(basePackages, ","), debianSuite, root, debianMirror)
	}); err != nil {
		return nil, fmt.Errorf("building the base image: %w", err)
	}
	if err := p.Timed("adding kind "+kindVer+" base-image files", func() error {
		return copyKindFiles(filepath.Join(kindDir, "images", "base", "files"), root)
	}); err != nil {
		return nil, err
	}
	if err := p.Timed("configuring the base root file system", func() error {
		return command.Run(ctx, work, os.Environ(), "chroot", root, "/bin/sh", "-c", baseSetupScript)
	}); err != nil {
		return nil, err
	}
	err = cache.FillLocked(b.Dir, func(tmp string) error {
		tools := image.NewLayer()
		for _, tp := range toolsPaths {
			if err := tools.FromRoot(root, tp); err != nil {
				return err
			}
		}
		if err := addLibraries(ctx, root, tools, toolsPaths); err != nil {
			return err
		}
		if _, err := tools.WriteTo(filepath.Join(tmp, "tools.tar")); err != nil {
			return err
		}
		bb := image.NewLayer().File("/bin/busybox", filepath.Join(root, "usr/bin/busybox"), 0o755)
		applets, err := os.ReadFile(filepath.Join(root, ".busybox-applets"))
		if err != nil {
			return err
		}
		for _, a := range strings.Fields(string(applets)) {
			if a != "busybox" {
				bb.Symlink("/bin/"+a, "busybox")
			}
		}
		bb.Dir("/tmp", 0o1777).Dir("/etc", 0o755)
		bb.Data("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"), 0o644)
		bb.Data("/etc/group", []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644)
		_, err = bb.WriteTo(filepath.Join(tmp, "busybox.tar"))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("extracting tool layers from the base root file system: %w", err)
	}
	_ = os.Remove(filepath.Join(root, ".busybox-applets"))
	if err := p.Timed("importing base image "+b.Ref, func() error {
		lf, err := tarDir(ctx, root, filepath.Join(work, "rootfs.tar"))
		if err != nil {
			return err
		}
		return h.DockerLoad(ctx, image.Image{
			Tags:       []string{b.Ref},
			Layers:     []image.Layer{lf},
			Env:        []string{"container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Entrypoint: []string{"/usr/local/bin/entrypoint", "/sbin/init"},
			StopSignal: "SIGRTMIN+3",
			Labels:     map[string]string{"io.skewproof.image": "base", "io.skewproof.key": b.Key},
		})
	}); err != nil {
		return nil, fmt.Errorf("importing the base image: %w", err)
	}
	if !layersOK() {
		return nil, fmt.Errorf("base image layers missing in %s", b.Dir)
	}
	return b, nil
}

// tarDir archives a root file system with numeric owners, xattrs and
// capabilities kept, and returns it with its digest.
func tarDir(ctx context.Context, dir, dst string) (image.Layer, error) {
	if err := command.Run(ctx, dir, os.Environ(), "tar", "--numeric-owner", "--xattrs", "--xattrs-include=security.capability", "-C", dir, "-cf", dst, "."); err != nil {
		return image.Layer{}, err
	}
	return image.DigestFile(dst)
}

// copyKindFiles installs kind's base-image files as kind's Dockerfile does.
func copyKindFiles(src, root string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." || strings.HasPrefix(rel, "LICENSES") {
			return nil
		}
		dst := filepath.Join(root, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		return copyFile(p, dst, mode)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// addLibraries adds the shared libraries (per ldd in the chroot) of every
// ELF file among paths, and of the shared objects in a directory among them
// (iptables' extensions: libxt_statistic.so needs libm), to the layer.
func addLibraries(ctx context.Context, root string, l *image.LayerBuilder, paths []string) error {
	seen := map[string]bool{}
	var files []string
	for _, p := range paths {
		if ents, err := os.ReadDir(filepath.Join(root, p)); err == nil {
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".so") {
					files = append(files, path.Join(p, e.Name()))
				}
			}
			continue
		}
		files = append(files, p)
	}
	for _, p := range files {
		out, err := exec.CommandContext(ctx, "chroot", root, "ldd", p).CombinedOutput()
		if err != nil {
			continue // not a dynamic executable (directory, script, static binary)
		}
		for _, line := range strings.Split(string(out), "\n") {
			var lib string
			if i := strings.Index(line, "=> "); i >= 0 {
				lib = strings.Fields(line[i+3:])[0]
			} else if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "/") {
				lib = f[0]
			}
			if lib == "" || !strings.HasPrefix(lib, "/") || seen[lib] {
				continue
			}
			seen[lib] = true
			if err := l.FromRoot(root, lib); err != nil {
				return err
			}
		}
	}
	return nil
}
