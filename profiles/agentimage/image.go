// The agent image: named after a hash of the skewproof binary and its extra
// layers (apparmor_parser when the build host can provide it), built offline
// and loaded into kind nodes or saved as an archive for a registry.

package agentimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/profiles/agent"
)

// Ref is the agent image name for a skewproof binary and the
// extra layers under it: its tag hashes both, so a changed binary or layer
// is a new image.
func Ref(binary string, extra ...image.Layer) (string, error) {
	f, err := os.Open(binary)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	for _, e := range extra {
		fmt.Fprintf(h, "\nlayer %s", e.DiffID)
	}
	return "skewproof.local/skewproof-agent:" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Image is an agent image loaded into the nodes.
type Image struct {
	Ref string
	// AppArmorParser is the package apparmor_parser comes from ("apparmor
	// 3.0.8-3"), empty when the image has none.
	AppArmorParser string
	// Note says why the image has no apparmor_parser (nodes with AppArmor
	// then report Failed for AppArmorProfiles).
	Note string
}

// agentImage names the agent image of a binary and gathers its extra
// layers: apparmor_parser with its libraries when the build host's package
// manager provides Debian's apparmor package (AppArmorParserLayer);
// without it the image still builds.
func agentImage(ctx context.Context, binary string) (Image, []image.Layer, error) {
	var (
		img   Image
		extra []image.Layer
	)
	l, err := AppArmorParserLayer(ctx)
	switch {
	case err == nil:
		extra = append(extra, l)
		img.AppArmorParser = l.Version
	case errors.Is(err, ErrNoAppArmorPackage):
		img.Note = "the agent image has no apparmor_parser: " + err.Error()
	default:
		return img, nil, fmt.Errorf("adding apparmor_parser to the agent image: %w", err)
	}
	if img.Ref, err = Ref(binary, extra...); err != nil {
		return img, nil, fmt.Errorf("hashing the agent binary: %w", err)
	}
	return img, extra, nil
}

// entrypoint is the agent image's entrypoint: the node agent.
var entrypoint = []string{agent.BinaryInImage, "agent"}

// Load builds the agent image from a static skewproof binary
// (CGO_ENABLED=0) offline and imports it into each named kind node
// container.
func Load(ctx context.Context, binary string, nodes []string) (Image, error) {
	img, extra, err := agentImage(ctx, binary)
	if err != nil {
		return img, err
	}
	err = inWorkDir(func(work string) error {
		archive := filepath.Join(work, "image.tar")
		if err := image.WriteBinary(archive, work, img.Ref, binary, agent.BinaryInImage, entrypoint, extra...); err != nil {
			return err
		}
		return clusters.NewProvider(nil).LoadImageArchive(ctx, archive, img.Ref, nodes)
	})
	if err != nil {
		return img, fmt.Errorf("loading the agent image: %w", err)
	}
	return img, nil
}

// Save writes the agent image of Load as a "docker
// save" archive at archive, for clusters whose nodes pull from a registry:
// load it (docker load, ctr images import), tag and push it, and pass the
// reference to 'skewproof run --agent-image' or 'profiles deploy --image'.
func Save(ctx context.Context, binary, archive string) (Image, error) {
	img, extra, err := agentImage(ctx, binary)
	if err != nil {
		return img, err
	}
	return img, inWorkDir(func(work string) error {
		if err := image.WriteBinary(archive, work, img.Ref, binary, agent.BinaryInImage, entrypoint, extra...); err != nil {
			_ = os.Remove(archive)
			return fmt.Errorf("writing the agent image: %w", err)
		}
		return nil
	})
}

// inWorkDir runs fn with a temporary directory for the image's files,
// removed afterwards.
func inWorkDir(fn func(work string) error) error {
	work, err := os.MkdirTemp("", "skewproof-agent-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	return fn(work)
}
