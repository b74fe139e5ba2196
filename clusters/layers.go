package clusters

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/image"
)

// The images other packages build (the node agent's, the conformance
// image) are one static binary on top of extra layers; this file makes
// those layers, and load.go writes and loads the images.

// ExtraLayer is a prebuilt layer tar to add to an image.
type ExtraLayer struct {
	Path    string // uncompressed tar
	Digest  string // sha256:<hex> of the tar (its diff ID)
	Version string // what it holds, for messages (e.g. "apparmor 3.0.8-3")
}

func extraLayer(l image.Layer) ExtraLayer { return ExtraLayer{Path: l.Path, Digest: l.DiffID} }

// LayerFromFile is the ExtraLayer of an existing layer tar.
func LayerFromFile(path string) (ExtraLayer, error) {
	l, err := image.DigestFile(path)
	if err != nil {
		return ExtraLayer{}, err
	}
	return extraLayer(l), nil
}

// LayerContent is what WriteLayer puts into a layer.
type LayerContent struct {
	// Executables maps a path in the image to a file on this host (mode
	// 0755); each comes with the shared libraries and the loader that ldd
	// names for it on this host.
	Executables map[string]string
	// Data maps a path in the image to its content (mode 0644).
	Data map[string][]byte
	// Trees are absolute paths of files or directories in the root file
	// system at Root, copied to the same paths (directories recursively,
	// symbolic links inside Root kept as links and followed).
	Root  string
	Trees []string
}

// WriteLayer writes the layer of c as an uncompressed tar at dst. Entries
// are sorted and timestamps fixed: equal content gives an equal digest.
func WriteLayer(ctx context.Context, dst string, c LayerContent) (ExtraLayer, error) {
	l := image.NewLayer()
	inImage := make([]string, 0, len(c.Executables))
	for p := range c.Executables {
		inImage = append(inImage, p)
	}
	sort.Strings(inImage)
	for _, p := range inImage {
		src := c.Executables[p]
		l.File(p, src, 0o755)
		libs, err := image.SharedLibraries(ctx, src)
		if err != nil {
			return ExtraLayer{}, err
		}
		for _, lib := range libs {
			if err := l.FromRoot("/", lib); err != nil {
				return ExtraLayer{}, fmt.Errorf("adding library %s: %w", lib, err)
			}
		}
	}
	for p, data := range c.Data {
		l.Data(p, data, 0o644)
	}
	for _, t := range c.Trees {
		if err := l.FromRoot(c.Root, t); err != nil {
			return ExtraLayer{}, err
		}
	}
	lf, err := l.WriteTo(dst)
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("writing the layer %s: %w", dst, err)
	}
	return extraLayer(lf), nil
}

// FileLayer writes, into dir, a layer holding the file src at inImage
// (mode 0755).
func FileLayer(dir, src, inImage string) (ExtraLayer, error) {
	lf, err := image.NewLayer().File(inImage, src, 0o755).WriteTo(filepath.Join(dir, filepath.Base(inImage)+".layer.tar"))
	if err != nil {
		return ExtraLayer{}, fmt.Errorf("writing the layer of %s: %w", inImage, err)
	}
	return extraLayer(lf), nil
}

// HostToolsLayer writes, into dir, a layer holding this host's tools (found
// on PATH, e.g. "sh", "cat", "sleep") at /bin/<name>, with the shared
// libraries and loader ldd names for them: a minimal shell for images that
// must run 'sh -c "cat …"' (Hydrophone reads a conformance image's results
// that way).
func HostToolsLayer(ctx context.Context, dir string, tools ...string) (ExtraLayer, error) {
	c := LayerContent{Executables: map[string]string{}}
	for _, t := range tools {
		p, err := exec.LookPath(t)
		if err != nil {
			return ExtraLayer{}, fmt.Errorf("%s is needed for the image: %w", t, err)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ExtraLayer{}, err
		}
		c.Executables["/bin/"+t] = real
	}
	return WriteLayer(ctx, filepath.Join(dir, "tools.layer.tar"), c)
}

// CacheEntry returns the directory <cache>/<name>-<key>, where key hashes
// keyParts (with the builder version and the Go toolchain: every input of
// what the entry holds), filling it with fill when it is not complete yet.
// fill writes into a temporary directory that becomes the entry only when
// fill succeeds.
func CacheEntry(ctx context.Context, name string, keyParts []string, fill func(tmp string) error) (string, error) {
	dir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	entry := filepath.Join(dir, name+"-"+cache.Key(keyParts...))
	return entry, cache.AtomicDir(ctx, entry, nil, fill)
}
