//go:build integration

package agentimage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/profiles/agentimage"
)

// The apparmor_parser layer, built from this host's Debian package, runs in
// an image that holds nothing else of a distribution (a static busybox as
// the image's binary): apparmor_parser --version exits 0. This needs no
// AppArmor in the kernel.
func TestIntegrationAppArmorParserLayer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	l, err := agentimage.AppArmorParserLayer(ctx)
	if errors.Is(err, agentimage.ErrNoAppArmorPackage) {
		t.Skipf("this host cannot provide the package: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ref := "skewproof.local/apparmor-parser-test:" + strings.TrimPrefix(l.DiffID, "sha256:")[:12]
	archive := filepath.Join(dir, "image.tar")
	if err := image.WriteBinary(archive, dir, ref, "/bin/busybox", "/bin/busybox", nil, l); err != nil {
		t.Fatal(err)
	}
	if _, err := docker(ctx, "load", "-q", "-i", archive); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker(context.Background(), "rmi", ref) })
	// Both output streams: a warning (e.g. a missing parser.conf) fails too.
	out, err := docker(ctx, "run", "--rm", "--network=none", "--read-only", "--cap-drop=ALL", "--entrypoint", "/bin/busybox", ref,
		"sh", "-c", agentimage.AppArmorParserInImage+" --version 2>&1")
	if err != nil {
		t.Fatalf("apparmor_parser --version in the image: %v", err)
	}
	if !strings.Contains(out, "AppArmor parser version") || strings.Contains(out, "Warning") {
		t.Fatalf("unexpected output %q", out)
	}
	t.Logf("%s: %s", l.Version, strings.SplitN(out, "\n", 2)[0])
}

// docker runs the Docker CLI and returns its trimmed standard output; an
// error carries its standard error.
func docker(ctx context.Context, args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
