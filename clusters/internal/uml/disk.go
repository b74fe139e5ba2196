// Package uml runs a Kubernetes worker node whose kernel is User-Mode Linux
// (a Linux kernel as an ordinary host process, no KVM) with AppArmor
// enabled: the file system of a kind worker node image on an ext4 disk
// image, booted with systemd, joined to a kind cluster with kubeadm over a
// tap device on the cluster's Docker bridge. It gives hosts whose own kernel
// has no AppArmor a node that enforces it.
package uml

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

//go:embed files
var files embed.FS

// install says where each embedded file goes in the node's file system.
var install = []struct {
	src, dst string
	mode     os.FileMode
	link     string // a symlink in a .wants directory
}{
	{"setup.sh", "/kind/bin/skewproof-uml-setup.sh", 0o755, ""},
	{"join.sh", "/kind/bin/skewproof-uml-join.sh", 0o755, ""},
	{"cgroups.sh", "/kind/bin/skewproof-uml-cgroups.sh", 0o755, ""},
	{"exec.sh", "/kind/bin/skewproof-uml-exec.sh", 0o755, ""},
	{"skewproof-uml.service", "/etc/systemd/system/skewproof-uml.service", 0o644, "multi-user.target.wants"},
	{"skewproof-uml-exec.service", "/etc/systemd/system/skewproof-uml-exec.service", 0o644, "multi-user.target.wants"},
	{"kubelet-uml.conf", "/etc/systemd/system/kubelet.service.d/20-skewproof-uml.conf", 0o644, ""},
}

// diskSize is the ext4 image's size (sparse; the node image is ~1 GB, the
// rest is room for the containers the node runs, written to a per-node
// copy-on-write file).
const diskSize = "6G"

// HostReady says what this host lacks to run a UML node with kernel (the
// kernel a user gives, or "" for the kernel skewproof builds), as one line
// with the remedy; nil when nothing is missing.
func HostReady(cacheDir, kernel string) error {
	var missing []string
	for _, tool := range []string{"mkfs.ext4", "ip", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("an AppArmor node needs %s on this host: run 'sudo hack/setup-host.sh --uml'", strings.Join(missing, ", "))
	}
	if kernel != "" {
		if fi, err := os.Stat(kernel); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("--uml-kernel %s is not an executable file: give the path of a User-Mode Linux kernel (a 'linux' built with ARCH=um)", kernel)
		}
		return nil
	}
	if CachedKernel(cacheDir) != "" {
		return nil
	}
	return BuildReady()
}

// filesHash identifies the embedded files: a disk built from other files is
// another disk. (The kernel is not on the disk: everything it needs is
// built in.)
func filesHash() (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, diskSize)
	for _, f := range install {
		b, err := files.ReadFile(path.Join("files", f.src))
		if err != nil {
			return "", err
		}
		fmt.Fprintln(h, f.dst, f.mode, f.link, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Disk returns the ext4 disk image of a node image's file system with the
// UML node's files added, building it into cacheDir when it is not there
// (imageID is the node image's Docker image ID). A disk is written under a
// temporary name and renamed when complete, so an interrupted build leaves
// nothing a later build trusts.
func Disk(ctx context.Context, cacheDir, image, imageID string, step func(string, ...any)) (string, error) {
	fh, err := filesHash()
	if err != nil {
		return "", err
	}
	id := strings.TrimPrefix(imageID, "sha256:")
	if len(id) > 16 {
		id = id[:16]
	}
	disk := filepath.Join(cacheDir, "uml", "disk-"+id+"-"+fh+".ext4")
	if _, err := os.Stat(disk); err == nil {
		step("AppArmor node disk %s: cached", filepath.Base(disk))
		return disk, nil
	}
	if err := os.MkdirAll(filepath.Dir(disk), 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(filepath.Dir(disk), ".build-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()
	root := filepath.Join(work, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", err
	}
	step("AppArmor node disk: unpacking %s", image)
	if err := exportImage(ctx, image, root); err != nil {
		return "", err
	}
	if err := addFiles(root); err != nil {
		return "", err
	}
	step("AppArmor node disk: writing the ext4 image of %s", image)
	tmp := filepath.Join(work, "disk.ext4")
	if out, err := exec.CommandContext(ctx, "mkfs.ext4", "-q", "-F", "-L", "skewproof-uml", "-d", root, tmp, diskSize).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mkfs.ext4 of the AppArmor node disk: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, disk); err != nil {
		return "", err
	}
	return disk, nil
}

// StaleDisks lists the disks in cacheDir that no build can use again: of a
// node image Docker no longer has (live gives the IDs of the images it
// has; asked only when there are disks), or made with other node files
// than this build's (the key's second half). Each is 0.7-1.1 GB, and every
// node image removed or rebuilt leaves its own behind. A disk being built
// is in a temporary directory, not listed.
func StaleDisks(cacheDir string, live func() ([]string, error)) ([]string, error) {
	disks, _ := filepath.Glob(filepath.Join(cacheDir, "uml", "disk-*.ext4"))
	if len(disks) == 0 {
		return nil, nil
	}
	fh, err := filesHash()
	if err != nil {
		return nil, err
	}
	images, err := live()
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, id := range images {
		if id = strings.TrimPrefix(id, "sha256:"); len(id) >= 16 {
			ids[id[:16]] = true
		}
	}
	var stale []string
	for _, d := range disks {
		id, files, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(d), "disk-"), ".ext4"), "-")
		if !ok || files != fh || !ids[id] {
			stale = append(stale, d)
		}
	}
	return stale, nil
}

// exportImage unpacks a Docker image's file system into root (as root, so
// that owners and device nodes are kept).
func exportImage(ctx context.Context, image, root string) error {
	out, err := exec.CommandContext(ctx, "docker", "create", "--label", "io.skewproof.image=uml-export", image, "/bin/true").Output()
	if err != nil {
		return fmt.Errorf("docker create %s: %w", image, err)
	}
	cid := strings.TrimSpace(string(out))
	defer func() { _ = exec.Command("docker", "rm", "-f", cid).Run() }()
	export := exec.CommandContext(ctx, "docker", "export", cid)
	untar := exec.CommandContext(ctx, "tar", "-x", "-p", "--numeric-owner", "-C", root)
	pipe, err := export.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var terr strings.Builder
	untar.Stderr = &terr
	if err := export.Start(); err != nil {
		return err
	}
	if err := untar.Run(); err != nil {
		_ = export.Process.Kill()
		_ = export.Wait()
		return fmt.Errorf("unpacking %s: %v: %s", image, err, strings.TrimSpace(terr.String()))
	}
	if err := export.Wait(); err != nil {
		return fmt.Errorf("docker export %s: %w", image, err)
	}
	return nil
}

// addFiles puts the UML node's units and scripts into the node's file
// system.
func addFiles(root string) error {
	for _, f := range install {
		b, err := fs.ReadFile(files, path.Join("files", f.src))
		if err != nil {
			return err
		}
		dst := filepath.Join(root, f.dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, f.mode); err != nil {
			return err
		}
		if f.link != "" {
			l := filepath.Join(filepath.Dir(dst), f.link, filepath.Base(dst))
			if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
				return err
			}
			if err := os.Symlink("../"+filepath.Base(dst), l); err != nil {
				return err
			}
		}
	}
	// systemd makes a machine ID at boot when the file is empty.
	if err := os.WriteFile(filepath.Join(root, "etc/machine-id"), nil, 0o444); err != nil {
		return err
	}
	return nil
}
