package nodeimage

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/noderuntime"
	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/internal/owner"
)

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
// (pinned, not unpacked), and the container is committed as the node image,
// labelled with its runtimes (rt, and oci's version as the binary says it).
func assembleNodeImage(ctx context.Context, h command.Host, baseRef, ref, filesTar, archive string, images []image.Image, rt noderuntime.Runtime, oci ociRuntime) error {
	removeDeadBuildContainers(ctx, h)
	name := fmt.Sprintf("%s%s-%d", BuildContainerPrefix, owner.Token(), time.Now().UnixNano())
	// Created without cancellation (a second or two): a docker CLI killed
	// half-way leaves the daemon creating a container nobody removes.
	_, err := h.Docker(context.WithoutCancel(ctx), "run", "-d", "--name", name,
		"--privileged", "--security-opt", "seccomp=unconfined", "--entrypoint=sleep", baseRef, "infinity")
	// Removed with a fresh context: this must happen on interrupt too.
	defer func() { _, _ = h.Docker(context.Background(), "rm", "-f", "-v", name) }()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	ft, err := os.Open(filesTar)
	if err != nil {
		return err
	}
	_, err = h.DockerIn(ctx, ft, "cp", "-", name+":/")
	_ = ft.Close()
	if err != nil {
		return err
	}
	out, err := h.Docker(ctx, "exec", name, oci.nodePath, "--version")
	if err != nil {
		return fmt.Errorf("OCI runtime %s (%s in the node) does not run: %w", oci.name, oci.nodePath, err)
	}
	ociVersion := versionLabel(out)
	// A CRI-O node carries its images as an archive in its files, loaded at
	// its first boot (crio.go).
	if rt.CRIName() != noderuntime.CRICRIO {
		if err := importIntoContainerd(ctx, h, name, archive, images); err != nil {
			return err
		}
	}
	_, err = h.Docker(ctx, "commit",
		"--change", `ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]`,
		"--change", `CMD []`,
		"--change", "LABEL io.skewproof.image=node",
		"--change", "LABEL "+CRILabel+"="+rt.CRIName(),
		"--change", "LABEL "+OCILabel+"="+rt.OCIName(),
		"--change", "LABEL "+OCIVersionLabel+"="+ociVersion,
		"--change", "LABEL io.skewproof.node-tag="+strings.SplitN(strings.TrimPrefix(ref, nodeImageRepo+":"), "-", 2)[0],
		name, ref)
	return err
}

// importIntoContainerd starts the build container's containerd, imports
// the images of archive (pinned, not unpacked) and stops it again.
func importIntoContainerd(ctx context.Context, h command.Host, name, archive string, images []image.Image) error {
	if _, err := h.Docker(ctx, "exec", name, "sh", "-c", "nohup containerd >/tmp/containerd.log 2>&1 &"); err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := h.Docker(ctx, "exec", name, "ctr", "version")
		return err == nil, nil
	}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log, _ := h.Docker(ctx, "exec", name, "cat", "/tmp/containerd.log")
		return fmt.Errorf("containerd did not start in the build container: %s", command.Tail(log, 10))
	}
	af, err := os.Open(archive)
	if err != nil {
		return err
	}
	_, err = h.DockerIn(ctx, af, "exec", "-i", name, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack", "--digests", "--all-platforms", "-")
	_ = af.Close()
	if err != nil {
		return err
	}
	for _, img := range images {
		for _, t := range img.Tags {
			if _, err := h.Docker(ctx, "exec", name, "ctr", "-n", "k8s.io", "images", "label", t, "io.cri-containerd.pinned=pinned"); err != nil {
				return fmt.Errorf("image %s missing after import: %w", t, err)
			}
		}
	}
	if _, err := h.Docker(ctx, "exec", name, "sh", "-c", stopContainerdScript); err != nil {
		return fmt.Errorf("stopping containerd in the build container: %w", err)
	}
	return nil
}

// removeDeadBuildContainers removes the build containers of processes that
// were killed before they could.
func removeDeadBuildContainers(ctx context.Context, h command.Host) {
	out, _ := h.Docker(ctx, "ps", "-a", "--filter", "name=^"+BuildContainerPrefix, "--format", "{{.Names}}")
	for _, n := range strings.Fields(out) {
		if t, ok := owner.TokenIn(n, BuildContainerPrefix); ok && !owner.Alive(t) {
			_, _ = h.Docker(ctx, "rm", "-f", "-v", n)
		}
	}
}

// Labels of a node image: its CRI and OCI runtimes and the OCI runtime's
// version (the node labels nodefacts.CRIRuntimeLabel, nodefacts.OCIRuntimeLabel and
// nodefacts.OCIRuntimeVersionLabel are set from them).
const (
	CRILabel        = "io.skewproof.cri-runtime"
	OCILabel        = "io.skewproof.oci-runtime"
	OCIVersionLabel = "io.skewproof.oci-runtime-version"
)

// versionLabel is the version in the first line of an OCI runtime's
// --version ("runc version 1.1.15+ds1", "crun version 1.21"): its last word,
// without build metadata (after "+"), in the characters a label value may
// have; "unknown" when there is none.
func versionLabel(out string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return "unknown"
	}
	v, _, _ := strings.Cut(f[len(f)-1], "+")
	v = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, v)
	v = strings.Trim(v, ".-_")
	if len(v) > 63 {
		v = strings.Trim(v[:63], ".-_")
	}
	if v == "" {
		return "unknown"
	}
	return v
}
