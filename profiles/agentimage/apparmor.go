// Package agentimage builds what the node agent's image holds beside the
// skewproof binary: apparmor_parser, with which the agent loads AppArmor
// profiles on nodes whose kernel has AppArmor. The image itself is made
// and loaded by profiles (LoadAgentImage, SaveAgentImage) and, as the
// conformance image, by runner/incluster.
package agentimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/image"
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

// ErrNoAppArmorPackage says that this host cannot provide apparmor_parser
// (no apt, no candidate version, download failed); the wrapped message says
// why and what to do.
var ErrNoAppArmorPackage = errors.New("apparmor_parser is not available from this host's package manager")

// AppArmorParserLayer returns the layer holding apparmor_parser, building it
// (apt-get download, dpkg-deb -x, ldd) when the cache has none for the
// package version apt offers. Errors wrap ErrNoAppArmorPackage when the
// host cannot provide the package.
func AppArmorParserLayer(ctx context.Context) (image.Layer, error) {
	for _, tool := range []string{"apt-cache", "apt-get", "dpkg-deb", "dpkg-query", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return image.Layer{}, fmt.Errorf("%w: %s not found (a Debian-based build host provides it)", ErrNoAppArmorPackage, tool)
		}
	}
	version, err := aptCandidate(ctx, AppArmorPackage)
	if err != nil {
		return image.Layer{}, fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
	}
	arch, err := dpkgArch(ctx)
	if err != nil {
		return image.Layer{}, fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
	}
	// The libraries come from the host: their package version is part of the key.
	libc := installedVersion(ctx, "libc6")
	key := []string{"apparmor-parser", AppArmorPackage, version, arch, "libc6=" + libc, strings.Join(appArmorIncludeDirs, ","), appArmorParserConf}
	dir, err := cache.Entry(ctx, "apparmor-parser", key, func(tmp string) error {
		work := filepath.Join(tmp, "work")
		root := filepath.Join(work, "root")
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		if err := run(ctx, work, "apt-get", "download", "-q", AppArmorPackage+"="+version); err != nil {
			return fmt.Errorf("%w: %v", ErrNoAppArmorPackage, err)
		}
		debs, _ := filepath.Glob(filepath.Join(work, AppArmorPackage+"_*.deb"))
		if len(debs) != 1 {
			return fmt.Errorf("%w: apt-get download left %d .deb files", ErrNoAppArmorPackage, len(debs))
		}
		if err := run(ctx, work, "dpkg-deb", "-x", debs[0], root); err != nil {
			return err
		}
		c, err := layerContent(root)
		if err != nil {
			return err
		}
		if _, err := image.WriteLayer(ctx, filepath.Join(tmp, "layer.tar"), c); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "version"), []byte(AppArmorPackage+" "+version+" "+arch+"\n"), 0o644); err != nil {
			return err
		}
		return os.RemoveAll(work)
	})
	if err != nil {
		return image.Layer{}, fmt.Errorf("building the apparmor_parser layer (%s %s): %w", AppArmorPackage, version, err)
	}
	l, err := image.DigestFile(filepath.Join(dir, "layer.tar"))
	if err != nil {
		return image.Layer{}, err
	}
	l.Version = AppArmorPackage + " " + version
	return l, nil
}

// layerContent is apparmor_parser from the unpacked package at root (with
// its shared libraries from the host), parser.conf, and the include
// directories the package has.
func layerContent(root string) (image.LayerContent, error) {
	bin := filepath.Join(root, AppArmorParserInImage)
	if _, err := os.Stat(bin); err != nil {
		// Older packages put it in /sbin.
		alt := filepath.Join(root, "sbin", "apparmor_parser")
		if _, err2 := os.Stat(alt); err2 != nil {
			return image.LayerContent{}, fmt.Errorf("the %s package holds no apparmor_parser: %w", AppArmorPackage, err)
		}
		bin = alt
	}
	c := image.LayerContent{
		Executables: map[string]string{AppArmorParserInImage: bin},
		Data:        map[string][]byte{"/etc/apparmor/parser.conf": []byte(appArmorParserConf)},
		Root:        root,
	}
	for _, d := range appArmorIncludeDirs {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil { // not every version has every directory
			c.Trees = append(c.Trees, d)
		}
	}
	return c, nil
}

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

// run runs a command in dir; a failure carries its output.
func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
