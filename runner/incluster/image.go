package incluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/agentimage"
	"github.com/skewproof/skewproof/runner"
)

// ImageName is the repository of the conformance image; its tag hashes the
// binaries and layers.
const ImageName = "skewproof.local/skewproof-conformance"

// SuiteBinaryInImage is where the e2e binary sits: beside the skewproof
// binary (agent.BinaryInImage), where the runner looks for it.
const SuiteBinaryInImage = "/usr/local/bin/" + runner.SuiteBinaryName

// Entrypoint is the image's entrypoint.
var Entrypoint = []string{agent.BinaryInImage, "conformance-entrypoint"}

// Image is a conformance image built from a static skewproof binary and the
// e2e binary. It is also a node agent image (the agent's DaemonSet names
// its command), so the in-cluster run deploys its own image as the agent.
type Image struct {
	Ref string
	// Note says why the image has no apparmor_parser (empty: it has one).
	Note string
}

// layers are the image's layers under the skewproof binary: apparmor_parser
// (as in the agent image, when the host's package manager provides it), the
// e2e binary, and sh, cat and sleep (Hydrophone reads the results through
// 'sh -c cat'; its output container runs 'sh -c "sleep infinity"').
func layers(ctx context.Context, work, skewproof, e2e string) (Image, []image.Layer, error) {
	var img Image
	var extra []image.Layer
	l, err := agentimage.AppArmorParserLayer(ctx)
	switch {
	case err == nil:
		extra = append(extra, l)
	case errors.Is(err, agentimage.ErrNoAppArmorPackage):
		img.Note = "the image has no apparmor_parser: " + err.Error()
	default:
		return img, nil, err
	}
	tools, err := image.HostToolsLayer(ctx, work, "sh", "cat", "sleep")
	if err != nil {
		return img, nil, err
	}
	suite, err := image.FileLayer(work, e2e, SuiteBinaryInImage)
	if err != nil {
		return img, nil, err
	}
	extra = append(extra, tools, suite)
	ref, err := agentimage.Ref(skewproof, extra...)
	if err != nil {
		return img, nil, err
	}
	_, tag, _ := strings.Cut(ref, ":")
	img.Ref = ImageName + ":" + tag
	return img, extra, nil
}

// build makes the image's layers in a temporary directory and hands them
// to write.
func build(ctx context.Context, skewproof, e2e string, write func(work string, img Image, extra []image.Layer) error) (Image, error) {
	work, err := os.MkdirTemp("", "skewproof-conformance-image-")
	if err != nil {
		return Image{}, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	img, extra, err := layers(ctx, work, skewproof, e2e)
	if err != nil {
		return img, err
	}
	return img, write(work, img, extra)
}

// SaveImage writes the conformance image as a "docker save" archive.
func SaveImage(ctx context.Context, skewproof, e2e, archive string) (Image, error) {
	return build(ctx, skewproof, e2e, func(work string, img Image, extra []image.Layer) error {
		if err := image.WriteBinary(archive, work, img.Ref, skewproof, agent.BinaryInImage, Entrypoint, extra...); err != nil {
			_ = os.Remove(archive)
			return fmt.Errorf("writing the conformance image: %w", err)
		}
		return nil
	})
}

// LoadImage builds the conformance image and imports it into the named
// local nodes (kind node containers, User-Mode Linux nodes).
func LoadImage(ctx context.Context, skewproof, e2e string, nodes []string) (Image, error) {
	return build(ctx, skewproof, e2e, func(work string, img Image, extra []image.Layer) error {
		archive := filepath.Join(work, "image.tar")
		if err := image.WriteBinary(archive, work, img.Ref, skewproof, agent.BinaryInImage, Entrypoint, extra...); err != nil {
			return err
		}
		return clusters.NewProvider(nil).LoadImageArchive(ctx, archive, img.Ref, nodes)
	})
}
