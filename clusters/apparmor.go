package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	senv "github.com/skewproof/skewproof/suites/env"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// The agent image gets apparmor_parser from Debian's apparmor package,
// fetched with the host's apt (no registry): the package is downloaded and
// unpacked into a temporary directory, and apparmor_parser, its shared
// libraries (the host's, found with ldd, the dynamic loader included) and
// the policy include files it resolves (/etc/apparmor.d/{abi,abstractions,
// tunables}) go into one layer, cached per package version.

// AppArmorPackage is the Debian package apparmor_parser comes from.
const AppArmorPackage = "apparmor"

// AppArmorParserInImage is where apparmor_parser lives in the layer.
const AppArmorParserInImage = "/usr/sbin/apparmor_parser"

// appArmorParserConf is the layer's /etc/apparmor/parser.conf: without the
// file apparmor_parser warns on every run. No option is set: the policy is
// compiled for the features of the running kernel, and the agent passes
// --skip-cache.
const appArmorParserConf = "# apparmor_parser configuration of the skewproof agent image: defaults.\n"

// appArmorIncludeDirs are copied from the package so that profiles using
// "include <tunables/global>" or "abi <abi/3.0>" compile.
var appArmorIncludeDirs = []string{"/etc/apparmor.d/abi", "/etc/apparmor.d/abstractions", "/etc/apparmor.d/tunables"}

// ExtraLayer is a prebuilt layer tar to add to an image.
type ExtraLayer struct {
	Path    string // uncompressed tar
	Digest  string // sha256:<hex> of the tar (its diff ID)
	Version string // what it holds, for messages (e.g. "apparmor 3.0.8-3")
}

// ErrNoAppArmorPackage says that this host cannot provide apparmor_parser
// (no apt, no candidate version, download failed); the wrapped message says
// why and what to do.
var ErrNoAppArmorPackage = errors.New("apparmor_parser is not available from this host's package manager")

// aptCandidate returns the version apt would install of pkg.
func aptCandidate(ctx context.Context, pkg string) (string, error) {
	out, err := exec.CommandContext(ctx, "apt-cache", "policy", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %v", pkg, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Candidate:"); ok {
			v = strings.TrimSpace(v)
			if v == "" || v == "(none)" {
				break
			}
			return v, nil
		}
	}
	return "", fmt.Errorf("apt knows no version of %s (run apt-get update, or hack/setup-host.sh)", pkg)
}

func dpkgArch(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "dpkg", "--print-architecture").Output()
	if err != nil {
		return "", fmt.Errorf("dpkg --print-architecture: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// installedVersion is the installed version of a package on the host, or "".
func installedVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// AppArmorParserLayer returns the layer holding apparmor_parser, building it
// (apt-get download, dpkg-deb -x, ldd) when the cache has none for the
// package version apt offers. Errors wrap ErrNoAppArmorPackage when the
// host cannot provide the package.
func AppArmorParserLayer(ctx context.Context) (ExtraLayer, error) {
	for _, tool := range []string{"apt-cache", "apt-get", "dpkg-deb", "dpkg-query", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return ExtraLayer{}, fmt.Errorf("%w: %s not found (a Debian-based build host provides it)", ErrNoAppArmorPackage, tool)
		}
	}
	version, err := aptCandidate(ctx, AppArmorPackage)
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
	}
	arch, err := dpkgArch(ctx)
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
	}
	// The libraries come from the host: their package version is part of the key.
	libc := installedVersion(ctx, "libc6")
	cache, err := senv.ResolveCacheDir()
	if err != nil {
		return ExtraLayer{}, err
	}
	key := cacheKey("apparmor-parser", AppArmorPackage, version, arch, "libc6="+libc, strings.Join(appArmorIncludeDirs, ","), appArmorParserConf)
	dir := filepath.Join(cache, "apparmor-parser-"+key)
	layer := filepath.Join(dir, "layer.tar")
	err = atomicDir(dir, func(tmp string) error {
		work := filepath.Join(tmp, "work")
		root := filepath.Join(work, "root")
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		if err := runIn(ctx, work, os.Environ(), "apt-get", "download", "-q", AppArmorPackage+"="+version); err != nil {
			return fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
		}
		debs, _ := filepath.Glob(filepath.Join(work, AppArmorPackage+"_*.deb"))
		if len(debs) != 1 {
			return fmt.Errorf("%w: apt-get download left %d .deb files", ErrNoAppArmorPackage, len(debs))
		}
		if err := runIn(ctx, work, os.Environ(), "dpkg-deb", "-x", debs[0], root); err != nil {
			return err
		}
		l, err := appArmorLayer(ctx, root)
		if err != nil {
			return err
		}
		if _, err := l.WriteTo(filepath.Join(tmp, "layer.tar")); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "version"), []byte(AppArmorPackage+" "+version+" "+arch+"\n"), 0o644); err != nil {
			return err
		}
		return os.RemoveAll(work)
	})
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("building the apparmor_parser layer (%s %s): %w", AppArmorPackage, version, err)
	}
	lf, err := digestFile(layer)
	if err != nil {
		return ExtraLayer{}, err
	}
	return ExtraLayer{Path: lf.Path, Digest: lf.DiffID, Version: AppArmorPackage + " " + version}, nil
}

// appArmorLayer collects apparmor_parser from the unpacked package at root,
// its shared libraries from the host, and the include directories.
func appArmorLayer(ctx context.Context, root string) (*layerBuilder, error) {
	bin := filepath.Join(root, AppArmorParserInImage)
	if _, err := os.Stat(bin); err != nil {
		// Older packages put it in /sbin.
		alt := filepath.Join(root, "sbin", "apparmor_parser")
		if _, err2 := os.Stat(alt); err2 != nil {
			return nil, fmt.Errorf("the %s package holds no apparmor_parser: %w", AppArmorPackage, err)
		}
		bin = alt
	}
	l := newLayer().File(AppArmorParserInImage, bin, 0o755).Data("/etc/apparmor/parser.conf", []byte(appArmorParserConf), 0o644)
	libs, err := sharedLibraries(ctx, bin)
	if err != nil {
		return nil, err
	}
	for _, lib := range libs {
		if err := l.FromRoot("/", lib); err != nil {
			return nil, fmt.Errorf("adding library %s: %w", lib, err)
		}
	}
	for _, d := range appArmorIncludeDirs {
		if _, err := os.Stat(filepath.Join(root, d)); err != nil {
			continue // not every version has every directory
		}
		if err := l.FromRoot(root, d); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// sharedLibraries lists the absolute paths of the shared libraries (and the
// dynamic loader) that bin needs on this host, per ldd. A static binary has
// none.
func sharedLibraries(ctx context.Context, bin string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ldd", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return parseLdd(string(out))
}

// parseLdd reads ldd's output: "name => /path (addr)", "/path (addr)",
// "linux-vdso.so.1 (addr)"; a "not found" library is an error.
func parseLdd(out string) ([]string, error) {
	var libs, missing []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var lib string
		if i := strings.Index(line, "=> "); i >= 0 {
			rest := strings.TrimSpace(line[i+3:])
			if strings.HasPrefix(rest, "not found") {
				missing = append(missing, strings.TrimSpace(line[:i]))
				continue
			}
			if f := strings.Fields(rest); len(f) > 0 {
				lib = f[0]
			}
		} else if f := strings.Fields(line); len(f) > 0 {
			lib = f[0]
		}
		if !strings.HasPrefix(lib, "/") || seen[lib] {
			continue // linux-vdso and friends have no file
		}
		seen[lib] = true
		libs = append(libs, lib)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shared libraries not found on this host: %s", strings.Join(missing, ", "))
	}
	return libs, nil
}

// On a host whose kernel has AppArmor, a kind node's runtime does not see
// it by itself: kind mounts no securityfs into node containers, and
// containerd (like runc) applies AppArmor only when
// /sys/kernel/security/apparmor exists and its environment has no
// "container" variable, which systemd in a kind node passes to it
// (containerd pkg/apparmor, hostSupports). nodeAppArmorMounts gives every
// node the host's securityfs and a containerd drop-in that unsets the
// variable; both are bind mounts made when the node container is created,
// so the node image stays the same.

// SecurityFS is where securityfs is mounted, on the host and in nodes.
const SecurityFS = "/sys/kernel/security"

// containerdAppArmorDropIn is the containerd.service drop-in of nodes on
// an AppArmor host.
const containerdAppArmorDropIn = `# skewproof: containerd applies AppArmor only without $container (kind sets container=docker)
[Service]
UnsetEnvironment=container
`

// ContainerdDropInPath is where the drop-in is mounted in a node.
const ContainerdDropInPath = "/etc/systemd/system/containerd.service.d/20-skewproof-apparmor.conf"

// writeContainerdAppArmorDropIn writes the drop-in into the cache
// directory (a fixed path: the nodes' bind mounts refer to it as long as
// they exist) and returns its path.
func writeContainerdAppArmorDropIn() (string, error) {
	dir, err := senv.ResolveCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "containerd-apparmor.conf")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(containerdAppArmorDropIn), 0o644); err != nil {
		return "", fmt.Errorf("writing the containerd AppArmor drop-in: %w", err)
	}
	return path, nil
}

// nodeAppArmorMounts are the extra mounts of a node on an AppArmor host:
// the host's securityfs and the containerd drop-in at dropIn.
func nodeAppArmorMounts(dropIn string) []v1alpha4.Mount {
	return []v1alpha4.Mount{
		{HostPath: SecurityFS, ContainerPath: SecurityFS},
		{HostPath: dropIn, ContainerPath: ContainerdDropInPath, Readonly: true},
	}
}
