package image

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The small images skewproof builds (the control plane's component images,
// the node agent's, the conformance image) are one static binary on top of
// extra layers: this file makes those layers and images.

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
func WriteLayer(ctx context.Context, dst string, c LayerContent) (Layer, error) {
	l := NewLayer()
	inImage := make([]string, 0, len(c.Executables))
	for p := range c.Executables {
		inImage = append(inImage, p)
	}
	sort.Strings(inImage)
	for _, p := range inImage {
		src := c.Executables[p]
		l.File(p, src, 0o755)
		libs, err := SharedLibraries(ctx, src)
		if err != nil {
			return Layer{}, err
		}
		for _, lib := range libs {
			if err := l.FromRoot("/", lib); err != nil {
				return Layer{}, fmt.Errorf("adding library %s: %w", lib, err)
			}
		}
	}
	for p, data := range c.Data {
		l.Data(p, data, 0o644)
	}
	for _, t := range c.Trees {
		if err := l.FromRoot(c.Root, t); err != nil {
			return Layer{}, err
		}
	}
	lf, err := l.WriteTo(dst)
	if err != nil {
		return Layer{}, fmt.Errorf("writing the layer %s: %w", dst, err)
	}
	return lf, nil
}

// FileLayer writes, into dir, a layer holding the file src at inImage
// (mode 0755).
func FileLayer(dir, src, inImage string) (Layer, error) {
	lf, err := NewLayer().File(inImage, src, 0o755).WriteTo(filepath.Join(dir, filepath.Base(inImage)+".layer.tar"))
	if err != nil {
		return Layer{}, fmt.Errorf("writing the layer of %s: %w", inImage, err)
	}
	return lf, nil
}

// HostToolsLayer writes, into dir, a layer holding this host's tools (found
// on PATH, e.g. "sh", "cat", "sleep") at /bin/<name>, with the shared
// libraries and loader ldd names for them: a minimal shell for images that
// must run 'sh -c "cat …"' (Hydrophone reads a conformance image's results
// that way).
func HostToolsLayer(ctx context.Context, dir string, tools ...string) (Layer, error) {
	c := LayerContent{Executables: map[string]string{}}
	for _, t := range tools {
		p, err := exec.LookPath(t)
		if err != nil {
			return Layer{}, fmt.Errorf("%s is needed for the image: %w", t, err)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return Layer{}, err
		}
		c.Executables["/bin/"+t] = real
	}
	return WriteLayer(ctx, filepath.Join(dir, "tools.layer.tar"), c)
}

// Binary is an image named ref that holds one static binary, bin, at
// inImage (with /tmp, /etc/passwd) on top of the extra layers; its layer is
// written into dir.
func Binary(dir, ref, bin, inImage string, entrypoint []string, extra ...Layer) (Image, error) {
	lf, err := NewLayer().File(inImage, filepath.Join(bin), 0o755).Dir("/tmp", 0o1777).
		Data("/etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0o644).
		Data("/etc/nsswitch.conf", []byte("hosts: files dns\n"), 0o644).
		WriteTo(filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(ref)+".tar"))
	if err != nil {
		return Image{}, err
	}
	return Image{
		Tags:       []string{ref},
		Layers:     append(append([]Layer{}, extra...), lf),
		Entrypoint: entrypoint,
		Labels:     map[string]string{"io.skewproof.image": "component"},
	}, nil
}

// WriteBinary writes the image of Binary as a "docker save" archive at
// archive (work holds temporary files), its layers gzip-compressed (the
// agent's and the conformance image's are copied into the nodes at every
// run); `docker load` takes it, and so does a node's containerd (clusters
// loads it into the nodes of a cluster).
func WriteBinary(archive, work, ref, bin, inImage string, entrypoint []string, extra ...Layer) error {
	img, err := Binary(work, ref, bin, inImage, entrypoint, extra...)
	if err != nil {
		return err
	}
	img.Gzip = true
	return WriteFile(archive, img)
}
