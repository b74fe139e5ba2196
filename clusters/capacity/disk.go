// The disk a cluster's builds take, checked before anything is built.

package capacity

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/skewproof/skewproof/internal/cachedir"
)

// What builds and nodes take on disk on the project's build machine
// (docs/reliability.md, "Resources"), rounded up: a node image is 680 MB
// (worker) to 1.03 GB (control plane) in Docker's data; the base image
// 303 MB; a running node writes about 300 MB (its container layer and /var
// volume). Compiling a control plane's Kubernetes version (its seven
// commands and etcd) from empty Go caches filled the build cache by 4.3 GiB
// and the module cache by 1.0 GiB, and its binaries take 0.6 GiB of the
// image cache; a version compiled for a worker's kubelet only, 2.0 + 0.8 +
// 0.1 GiB (v1.37.2 and v1.36.3, 2026-11-25). A second version compiled
// after the first takes less: the standard library and the modules both
// require at the same version are compiled and downloaded once. v1.24.17
// from empty caches took 3.0 + 2.0 + 0.55 GB, v1.23.17 after it 2.6 + 0.5 +
// 0.6 GB (2026-11-28, docs/clusters/README.md): each control-plane version
// counts controlPlaneVersionGiB, and the plan's first version sharedGiB more.
const (
	nodeImageGiB           = 1.0
	baseImageGiB           = 0.5
	sharedGiB              = 2.0
	controlPlaneVersionGiB = 4.0
	kubeletVersionGiB      = 3.0
	nodeGiB                = 0.3
	// An AppArmor node's disk: an ext4 file of its node image's files,
	// about 1 GB written (clusters/internal/uml, diskSize).
	appArmorDiskGiB = 1.0
)

// Builds is what bringing a cluster up would build (clusters'
// Provider.PlanBuilds says it).
type Builds struct {
	Base       bool     // the base image
	NodeImages []string // node image tags
	Versions   []string // Kubernetes versions to compile
	// ControlPlane are those of Versions compiled for a control plane (all
	// its commands); the others are compiled for a kubelet only.
	ControlPlane []string
	Nodes        int // nodes of the cluster
	// AppArmorDisks are the AppArmor nodes' disks made from the node
	// images built (kept in the image cache with their images).
	AppArmorDisks int
}

// Add merges o into b: builds of several clusters, of which nodes run at once.
func (b *Builds) Add(o Builds, nodes int) {
	b.Base = b.Base || o.Base
	for _, t := range o.NodeImages {
		if !slices.Contains(b.NodeImages, t) {
			b.NodeImages = append(b.NodeImages, t)
		}
	}
	for _, v := range o.Versions {
		if !slices.Contains(b.Versions, v) {
			b.Versions = append(b.Versions, v)
		}
	}
	for _, v := range o.ControlPlane {
		if !slices.Contains(b.ControlPlane, v) {
			b.ControlPlane = append(b.ControlPlane, v)
		}
	}
	b.Nodes = max(b.Nodes, nodes)
	b.AppArmorDisks += o.AppArmorDisks
}

// need is what b takes in Docker's data and in the caches, in GiB.
func (b Builds) need() (docker, caches float64) {
	docker = float64(len(b.NodeImages))*nodeImageGiB + float64(b.Nodes)*nodeGiB
	if b.Base {
		docker += baseImageGiB
	}
	if len(b.Versions) > 0 {
		caches = sharedGiB
	}
	for _, v := range b.Versions {
		if slices.Contains(b.ControlPlane, v) {
			caches += controlPlaneVersionGiB
		} else {
			caches += kubeletVersionGiB
		}
	}
	return docker, caches
}

// dockerWhat and cacheWhat say what takes Docker's data and the caches.
func (b Builds) dockerWhat() string {
	var what []string
	if b.Base {
		what = append(what, "the base image")
	}
	if n := len(b.NodeImages); n > 0 {
		what = append(what, fmt.Sprintf("%d node image(s)", n))
	}
	if b.Nodes > 0 {
		what = append(what, fmt.Sprintf("%d running node(s)", b.Nodes))
	}
	return strings.Join(what, ", ")
}

func (b Builds) cacheWhat() string {
	if len(b.Versions) == 0 {
		return ""
	}
	return "compiling Kubernetes " + strings.Join(b.Versions, ", ")
}

func (b Builds) disksWhat() string {
	if b.AppArmorDisks == 0 {
		return ""
	}
	return fmt.Sprintf("%d AppArmor node disk(s)", b.AppArmorDisks)
}

// CheckDiskFits refuses builds that do not fit in the free disk where
// Docker keeps its data and where the caches are, with the numbers.
func CheckDiskFits(ctx context.Context, b Builds) error {
	dockerRoot := dockerRootDir(ctx)
	if dockerRoot == "" {
		dockerRoot = "/var/lib/docker"
	}
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		return err
	}
	goCache := os.Getenv("GOCACHE")
	if goCache == "" {
		if d, err := os.UserCacheDir(); err == nil {
			goCache = filepath.Join(d, "go-build")
		}
	}
	dNeed, cNeed := b.need()
	return checkDisk([]diskNeed{{dockerRoot, "Docker's data", b.dockerWhat(), dNeed}, {goCache, "Go's build cache", b.cacheWhat(), cNeed}, {cacheDir, "the image cache", b.disksWhat(), float64(b.AppArmorDisks) * appArmorDiskGiB}})
}

type diskNeed struct {
	dir, where, what string
	gib              float64
}

// checkDisk adds up the needs per file system and compares each sum with
// that file system's free space.
func checkDisk(needs []diskNeed) error {
	type fs struct {
		dir           string
		wheres, whats []string
		need, free    float64
	}
	var order []uint64
	byDev := map[uint64]*fs{}
	for _, n := range needs {
		dev, free, ok := statDisk(n.dir)
		if !ok {
			continue
		}
		f := byDev[dev]
		if f == nil {
			f = &fs{dir: n.dir, free: free}
			byDev[dev] = f
			order = append(order, dev)
		}
		if n.gib > 0 {
			f.wheres = append(f.wheres, n.where)
			f.whats = append(f.whats, n.what)
			f.need += n.gib
		}
	}
	for _, dev := range order {
		f := byDev[dev]
		if f.need > f.free {
			return fmt.Errorf("%s: about %.1f GiB in %s (%s), which has %.1f GiB free; free disk ('skewproof images prune --keep N', 'docker system prune') or give prebuilt --node-image",
				strings.Join(f.whats, "; "), f.need, f.dir, strings.Join(f.wheres, " and "), f.free)
		}
	}
	return nil
}

// statDisk is the device and the free GiB of the file system holding dir
// (or its nearest existing parent).
func statDisk(dir string) (dev uint64, freeGiB float64, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		fi, err := os.Stat(d)
		if err == nil && syscall.Statfs(d, &st) == nil {
			if sys, isStat := fi.Sys().(*syscall.Stat_t); isStat {
				return uint64(sys.Dev), float64(st.Bavail) * float64(st.Bsize) / (1 << 30), true
			}
		}
		if d == "/" || d == "." || d == "" {
			return 0, 0, false
		}
	}
}

// dockerRootDir is where the Docker daemon keeps its data, "" when it does
// not answer.
func dockerRootDir(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.DockerRootDir}}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
