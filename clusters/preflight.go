package clusters

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/skew"

	"github.com/skewproof/skewproof/clusters/capacity"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
	"github.com/skewproof/skewproof/internal/image"
)

// The status of a check (not a verdict: verdicts are the oracle's,
// skew.Verdict).
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// Check is one host fact with its status and, when not ok, the remedy.
type Check struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Status string `json:"status"` // "ok", "warn" or "fail"
	Remedy string `json:"remedy,omitempty"`
}

// Report is the result of Provider.Preflight.
type Report struct {
	Checks []Check        `json:"checks"`
	Facts  skew.HostFacts `json:"facts"`
}

// CanRunClusters reports whether no check failed.
func (r Report) CanRunClusters() bool {
	for _, c := range r.Checks {
		if c.Status == checkFail {
			return false
		}
	}
	return true
}

// minFreeDiskGiB is the free space a cold build and one cluster need where
// images are cached and where Docker keeps them.
const minFreeDiskGiB = 20

// preflight checks the host (Provider.Preflight); the privileged-container
// check starts a container of probeImage to prove kind nodes can run (needs
// /bin/busybox for the probe image).
func preflight(ctx context.Context, h command.Host) Report {
	var r Report
	r.Facts = nodefacts.Host()
	add := func(c Check) { r.Checks = append(r.Checks, c) }

	dockerUp := false
	if _, err := exec.LookPath("docker"); err != nil {
		add(Check{"docker client", "not found", checkFail, "install Docker (sudo hack/setup-host.sh installs Debian's docker.io)"})
	} else if v, err := h.Docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		add(Check{"docker daemon", "not reachable: " + command.ErrSummary(err.Error()), checkFail, "start dockerd (sudo hack/setup-host.sh starts it)"})
	} else {
		dockerUp = true
		add(Check{"docker daemon", "version " + v, checkOK, ""})
	}

	bnd := nodeimage.CapBoundingSet()
	missing := nodeimage.MissingCaps(bnd)
	if dockerUp {
		add(privilegedProbe(ctx, h, missing))
	} else {
		add(Check{"privileged container", "not tested (no Docker daemon)", checkFail, "start Docker first"})
	}

	cg := Check{"cgroup version", fmt.Sprintf("v%d", r.Facts.CgroupVersion), checkOK, ""}
	if r.Facts.CgroupVersion == 1 {
		cg.Status = checkWarn
		cg.Value += " (kubelets from v1.35 are configured with failCgroupV1: false)"
	}
	add(cg)
	if r.Facts.Seccomp {
		add(Check{"seccomp", "available", checkOK, ""})
	} else {
		add(Check{"seccomp", "not available in this kernel", checkFail, "use a kernel with CONFIG_SECCOMP_FILTER; the seccomp suites cannot run"})
	}
	if r.Facts.AppArmor {
		add(Check{"apparmor", "enabled", checkOK, ""})
	} else {
		add(Check{"apparmor", "not enabled in this kernel", checkWarn, "kind nodes here cannot enforce AppArmor; a new cluster of 'skewproof run' gets an AppArmor node per kubelet (User-Mode Linux, --apparmor-node auto, docs/apparmor-node.md)"})
	}
	if cache, err := cachedir.Resolve(); err == nil {
		add(diskCheck("free disk (image cache "+cache+")", cache))
	}
	add(diskCheck("free disk (/var/lib/docker)", "/var/lib/docker"))
	add(memoryCheck())
	add(inotifyCheck())
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
		_ = f.Close()
		add(Check{"kvm", "/dev/kvm present", checkOK, ""})
	} else {
		add(Check{"kvm", "not available", checkWarn, "only needed for VM-based AppArmor hosts; not used by kind clusters"})
	}
	if os.Geteuid() != 0 {
		add(Check{"root", "not root", checkWarn, "building node images offline needs root (debootstrap); prebuilt images (--node-image) do not"})
	}
	return r
}

func diskCheck(name, dir string) Check {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			gib := float64(st.Bavail) * float64(st.Bsize) / (1 << 30)
			c := Check{name, fmt.Sprintf("%.1f GiB", gib), checkOK, ""}
			if gib < minFreeDiskGiB {
				c.Status = checkFail
				c.Remedy = fmt.Sprintf("free at least %d GiB ('skewproof images prune', 'docker system prune')", minFreeDiskGiB)
			}
			return c
		}
		if d == "/" || d == "." {
			return Check{name, "unknown", checkWarn, ""}
		}
	}
}

// memoryCheck says how many clusters of the default size (4 workers) fit.
func memoryCheck() Check {
	const workers = 4
	fit, avail := capacity.ClustersThatFit(workers)
	if avail == 0 {
		return Check{"memory", "unknown (no /proc/meminfo)", checkWarn, ""}
	}
	c := Check{"memory", fmt.Sprintf("%d MiB available: %d cluster(s) of 1+%d nodes at once (%d MiB each)", avail, fit, workers, capacity.ClusterMemoryMiB(workers)), checkOK, ""}
	if avail < capacity.ClusterMemoryMiB(workers) {
		c.Status, c.Remedy = checkWarn, "the default cluster may not fit; give fewer kubelets or free memory"
	}
	return c
}

// inotifyCheck says how many clusters of the default size (4 kind workers)
// the host's inotify instances hold at once: warn below two, the matrix
// presets' parallel clusters.
func inotifyCheck() Check {
	const workers = 4
	fit, limit := capacity.ClustersThatFitInotify(workers)
	if limit == 0 {
		return Check{"inotify instances", "unknown (no /proc/sys/fs/inotify/max_user_instances)", checkWarn, ""}
	}
	c := Check{"inotify instances", fmt.Sprintf("fs.inotify.max_user_instances %d: %d cluster(s) of 1+%d kind nodes at once (%d each)", limit, fit, workers, capacity.ClusterInotifyInstances(workers)), checkOK, ""}
	if capacity.CheckInotifyFits(1, workers) != nil {
		c.Status, c.Remedy = checkFail, "the default cluster's kube-proxy and kubelets run out of them; "+capacity.InotifyRemedy()
	} else if fit < 2 {
		c.Status, c.Remedy = checkWarn, "matrix runs get one cluster at a time; "+capacity.InotifyRemedy()
	}
	return c
}

const probeImage = "skewproof-probe:1"

// privilegedProbe starts a privileged container and execs into it, as kind
// does with every node.
func privilegedProbe(ctx context.Context, h command.Host, missing []string) Check {
	name := "privileged container"
	remedy := "run 'sudo hack/setup-host.sh': it installs an OCI runtime wrapper that drops the capabilities missing from this host's bounding set"
	if len(missing) > 0 {
		remedy = fmt.Sprintf("the capability bounding set lacks %s; %s", strings.Join(missing, ","), remedy)
	}
	if !h.ImageExists(ctx, probeImage) {
		bb := "/bin/busybox"
		if _, err := os.Stat(bb); err != nil {
			return Check{name, "not tested: /bin/busybox missing for the probe image", checkWarn, "apt-get install busybox-static (hack/setup-host.sh does)"}
		}
		dir, err := os.MkdirTemp("", "skewproof-probe-")
		if err != nil {
			return Check{name, "not tested: " + err.Error(), checkWarn, ""}
		}
		defer func() { _ = os.RemoveAll(dir) }()
		lf, err := image.NewLayer().File("/bin/busybox", bb, 0o755).Symlink("/bin/sh", "busybox").Symlink("/bin/sleep", "busybox").Symlink("/bin/true", "busybox").WriteTo(filepath.Join(dir, "layer.tar"))
		if err == nil {
			err = h.DockerLoad(ctx, image.Image{Tags: []string{probeImage}, Layers: []image.Layer{lf}, Labels: map[string]string{"io.skewproof.image": "probe"}})
		}
		if err != nil {
			return Check{name, "not tested: " + command.ErrSummary(err.Error()), checkWarn, ""}
		}
	}
	cname := fmt.Sprintf("skewproof-probe-%d", time.Now().UnixNano())
	defer func() { _, _ = h.Docker(context.Background(), "rm", "-f", cname) }()
	if _, err := h.Docker(ctx, "run", "-d", "--name", cname, "--privileged", probeImage, "sleep", "60"); err != nil {
		return Check{name, "cannot start: " + command.ErrSummary(err.Error()), checkFail, remedy}
	}
	if _, err := h.Docker(ctx, "exec", cname, "true"); err != nil {
		return Check{name, "starts, but exec fails: " + command.ErrSummary(err.Error()), checkFail, remedy}
	}
	v := "starts and execs"
	if len(missing) > 0 {
		v += fmt.Sprintf(" (bounding set lacks %s; runtime wrapper in place)", strings.Join(missing, ","))
	}
	return Check{name, v, checkOK, ""}
}
