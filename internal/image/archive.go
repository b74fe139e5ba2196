package image

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OS and Architecture are the platform of every image written here: the
// build host's, which is also the platform of the kind nodes that run them
// (containerd imports only images of its own platform by default).
const OS = "linux"

// Architecture is runtime.GOARCH: the binaries in the images are built for
// this host.
var Architecture = runtime.GOARCH

// DefaultPath is the environment of an image that names none.
const DefaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Image is one image of an archive: its layers (bottom first) and the
// parts of its configuration skewproof sets.
type Image struct {
	Tags       []string // full references, e.g. registry.k8s.io/pause:3.10.2
	Layers     []Layer
	Entrypoint []string
	Cmd        []string
	Env        []string // DefaultPath when empty
	StopSignal string
	Labels     map[string]string
	WorkingDir string
	User       string
	// Gzip writes the layers gzip-compressed at the fastest level, for an
	// archive copied into nodes at every run (the agent's): on a User-Mode
	// Linux node the import costs CPU by the byte read and written. Unset,
	// the layers are written as they are (DockerUncompressedLayer).
	Gzip bool
}

// v1Image assembles the image with go-containerregistry: the empty image,
// the layers appended (as they are, or gzip-compressed with s.Gzip), and
// the configuration. The creation time is the Unix epoch, so equal inputs
// give equal images.
func (s Image) v1Image() (v1.Image, error) {
	layers := make([]v1.Layer, 0, len(s.Layers))
	for _, l := range s.Layers {
		var (
			fl  v1.Layer
			err error
		)
		if s.Gzip {
			// Compressed once (kept in memory for the archive), so the
			// digest and the blob written agree.
			fl, err = tarball.LayerFromFile(l.Path, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
		} else {
			fl, err = newFileLayer(l)
		}
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Path, err)
		}
		layers = append(layers, fl)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = OS
	cf.Architecture = Architecture
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	env := s.Env
	if len(env) == 0 {
		env = []string{DefaultPath}
	}
	cf.Config = v1.Config{
		Env:        env,
		Entrypoint: s.Entrypoint,
		Cmd:        s.Cmd,
		StopSignal: s.StopSignal,
		Labels:     s.Labels,
		WorkingDir: s.WorkingDir,
		User:       s.User,
	}
	return mutate.ConfigFile(img, cf)
}

// Write writes images as one "docker save" archive to w (go-containerregistry's
// tarball format: manifest.json, one config and one file per distinct layer).
// A single image's archive is byte-for-byte reproducible; with several, the
// order of the entries is go-containerregistry's.
func Write(w io.Writer, images ...Image) error {
	if len(images) == 0 {
		return errors.New("no image to write")
	}
	refs := map[name.Reference]v1.Image{}
	for _, s := range images {
		if len(s.Tags) == 0 {
			return errors.New("an image without a tag cannot be loaded")
		}
		img, err := s.v1Image()
		if err != nil {
			return fmt.Errorf("image %s: %w", s.Tags[0], err)
		}
		for _, t := range s.Tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return fmt.Errorf("image reference %q: %w", t, err)
			}
			refs[tag] = img
		}
	}
	return tarball.MultiRefWrite(refs, w)
}

// WriteFile writes images as one "docker save" archive at path.
func WriteFile(path string, images ...Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, images...); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return err
	}
	return f.Close()
}

// fileLayer is a layer tar on disk written as it is, uncompressed (media
// type application/vnd.docker.image.rootfs.diff.tar): its digest is its
// diff ID, and nothing is compressed on the way to a node.
type fileLayer struct {
	path   string
	diffID v1.Hash
	size   int64
}

func newFileLayer(l Layer) (*fileLayer, error) {
	h, err := v1.NewHash(l.DiffID)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", l.Path, err)
	}
	fi, err := os.Stat(l.Path)
	if err != nil {
		return nil, err
	}
	return &fileLayer{path: l.Path, diffID: h, size: fi.Size()}, nil
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.diffID, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return os.Open(l.path) }
func (l *fileLayer) Size() (int64, error)                 { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return types.DockerUncompressedLayer, nil }
