package clusters

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// LoadBinaryImage makes an image named ref that holds one static binary at
// inImage (with /tmp, /etc/passwd) and imports it, pinned, into the
// containerd of each named kind node container. Nothing is pulled or pushed.
func LoadBinaryImage(ctx context.Context, ref, binary, inImage string, entrypoint []string, nodes []string) error {
	dir, err := os.MkdirTemp("", "skewproof-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	img, err := binaryImage(dir, ref, binary, inImage, entrypoint)
	if err != nil {
		return err
	}
	archive := filepath.Join(dir, "image.tar")
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	if err := writeImageArchive(f, []imageSpec{img}); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, n := range nodes {
		af, err := os.Open(archive)
		if err != nil {
			return err
		}
		_, err = dockerIn(ctx, af, "exec", "-i", n, "ctr", "-n", "k8s.io", "images", "import", "--no-unpack", "--digests", "-")
		af.Close()
		if err != nil {
			return fmt.Errorf("loading %s into node %s: %w", ref, n, err)
		}
		if _, err := docker(ctx, "exec", n, "ctr", "-n", "k8s.io", "images", "label", ref, "io.cri-containerd.pinned=pinned"); err != nil {
			return fmt.Errorf("pinning %s on node %s: %w", ref, n, err)
		}
	}
	return nil
}
