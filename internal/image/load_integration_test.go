//go:build integration

package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// busyboxImage is a runnable image: the host's static busybox with sh and
// echo links, entrypoint and command set.
func busyboxImage(t *testing.T, ref string) string {
	t.Helper()
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no static /bin/busybox on this host for a runnable image (apt-get install busybox-static)")
	}
	dir := t.TempDir()
	l, err := NewLayer().File("/bin/busybox", "/bin/busybox", 0o755).Symlink("/bin/sh", "busybox").Symlink("/bin/echo", "busybox").
		Dir("/tmp", 0o1777).WriteTo(filepath.Join(dir, "layer.tar"))
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := WriteFile(archive, Image{Tags: []string{ref}, Layers: []Layer{l}, Entrypoint: []string{"/bin/sh", "-c"},
		Cmd: []string{`echo "$GREETING from $(pwd)"`}, Env: []string{"GREETING=loaded", DefaultPath}, WorkingDir: "/tmp",
		Labels: map[string]string{"io.skewproof.image": "test"}}); err != nil {
		t.Fatal(err)
	}
	return archive
}

// docker load takes the archive; the image has this host's platform and
// runs with its entrypoint, command, environment and working directory.
func TestIntegrationDockerLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := run(ctx, "docker", "version", "--format", "{{.Server.Version}}"); err != nil {
		t.Skipf("no Docker daemon: %v", err)
	}
	ref := fmt.Sprintf("skewproof.local/image-test:%d", time.Now().UnixNano())
	archive := busyboxImage(t, ref)
	if out, err := run(ctx, "docker", "load", "-i", archive); err != nil || !strings.Contains(out, ref) {
		t.Fatalf("docker load: %q, %v", out, err)
	}
	t.Cleanup(func() { run(context.Background(), "docker", "rmi", "-f", ref) })
	platform, err := run(ctx, "docker", "image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := "linux/" + runtime.GOARCH; platform != want {
		t.Errorf("docker image inspect: platform %s, want %s", platform, want)
	}
	out, err := run(ctx, "docker", "run", "--rm", "--network=none", ref)
	if err != nil {
		t.Fatal(err)
	}
	if out != "loaded from /tmp" {
		t.Errorf("the image printed %q, want %q", out, "loaded from /tmp")
	}
}

// containerd imports the archive the way clusters loads images into nodes
// (ctr images import --no-unpack --digests), here into a namespace of the
// host's containerd (Docker's) that is removed afterwards.
func TestIntegrationContainerdImport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sock := ""
	for _, s := range []string{"/run/containerd/containerd.sock", "/run/docker/containerd/containerd.sock"} {
		if _, err := os.Stat(s); err == nil {
			sock = s
			break
		}
	}
	if _, err := exec.LookPath("ctr"); err != nil || sock == "" {
		t.Skip("no ctr or containerd socket on this host; kind nodes import the archives in the cluster tests")
	}
	ns := fmt.Sprintf("skewproof-image-test-%d", time.Now().UnixNano())
	ref := "skewproof.local/image-test:ctr"
	archive := busyboxImage(t, ref)
	ctr := func(args ...string) (string, error) {
		return run(ctx, "ctr", append([]string{"-a", sock, "-n", ns}, args...)...)
	}
	t.Cleanup(func() {
		// --digests also names the image import-<date>@<digest>.
		bg := context.Background()
		names, _ := run(bg, "ctr", "-a", sock, "-n", ns, "images", "ls", "-q")
		for _, n := range strings.Fields(names) {
			run(bg, "ctr", "-a", sock, "-n", ns, "images", "rm", "--sync", n)
		}
		// Blobs of an import that failed belong to no image.
		blobs, _ := run(bg, "ctr", "-a", sock, "-n", ns, "content", "ls", "-q")
		for _, d := range strings.Fields(blobs) {
			run(bg, "ctr", "-a", sock, "-n", ns, "content", "rm", d)
		}
		if _, err := run(bg, "ctr", "-a", sock, "namespaces", "rm", ns); err != nil {
			t.Errorf("removing the test namespace: %v", err)
		}
	})
	if _, err := ctr("images", "import", "--no-unpack", "--digests", archive); err != nil {
		t.Fatal(err)
	}
	out, err := ctr("images", "ls")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ref) || !strings.Contains(out, "linux/"+runtime.GOARCH) {
		t.Errorf("ctr images ls lacks %s for linux/%s:\n%s", ref, runtime.GOARCH, out)
	}
}
