// Package image writes container images without a registry or an image
// builder: layers are plain tar files made by a LayerBuilder (sorted
// entries, fixed timestamps: equal inputs give equal bytes), and images are
// "docker save" archives written with go-containerregistry, which both
// `docker load` and containerd's `ctr images import` accept.
package image

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Layer is an uncompressed layer tar on disk with its digest.
type Layer struct {
	Path   string
	DiffID string // sha256:<hex> of the uncompressed tar
	// Version says what a prebuilt layer holds, for messages (e.g.
	// "apparmor 3.0.8-3"); empty for most.
	Version string
}

type entry struct {
	name     string // path inside the image, without leading slash
	src      string // file on the host to copy (regular files)
	data     []byte // literal content (when src is empty and not a dir/link)
	link     string // symlink target
	dir      bool
	mode     int64
	hostFile bool
}

// LayerBuilder collects the entries of a layer.
type LayerBuilder struct {
	entries map[string]entry
}

// NewLayer returns an empty LayerBuilder.
func NewLayer() *LayerBuilder { return &LayerBuilder{entries: map[string]entry{}} }

func clean(name string) string { return strings.TrimPrefix(path.Clean("/"+name), "/") }

func (l *LayerBuilder) ensureParents(name string) {
	for d := path.Dir(name); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = entry{name: d, dir: true, mode: 0o755}
		}
	}
}

// File adds a host file at name with the given mode.
func (l *LayerBuilder) File(name, src string, mode int64) *LayerBuilder {
	name = clean(name)
	l.ensureParents(name)
	l.entries[name] = entry{name: name, src: src, mode: mode, hostFile: true}
	return l
}

// Data adds literal content at name.
func (l *LayerBuilder) Data(name string, data []byte, mode int64) *LayerBuilder {
	name = clean(name)
	l.ensureParents(name)
	l.entries[name] = entry{name: name, data: data, mode: mode}
	return l
}

// Symlink adds a symbolic link.
func (l *LayerBuilder) Symlink(name, target string) *LayerBuilder {
	name = clean(name)
	l.ensureParents(name)
	l.entries[name] = entry{name: name, link: target, mode: 0o777}
	return l
}

// Dir adds a directory.
func (l *LayerBuilder) Dir(name string, mode int64) *LayerBuilder {
	name = clean(name)
	l.ensureParents(name)
	l.entries[name] = entry{name: name, dir: true, mode: mode}
	return l
}

// FromRoot adds the file at abs (an absolute path inside the root file
// system at root) following symbolic links inside root: every link met on
// the way is added as a link, and the final regular file or directory is
// copied (directories recursively).
func (l *LayerBuilder) FromRoot(root, abs string) error {
	return l.fromRoot(root, abs, 0)
}

func (l *LayerBuilder) fromRoot(root, abs string, depth int) error {
	if depth > 40 {
		return fmt.Errorf("too many links resolving %s", abs)
	}
	abs = path.Clean("/" + abs)
	// Resolve the parent directories first, component by component.
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	for i, p := range parts {
		next := path.Join(cur, p)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			return fmt.Errorf("%s: %w", abs, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(filepath.Join(root, next))
			if err != nil {
				return err
			}
			l.Symlink(next, target)
			resolved := target
			if !path.IsAbs(target) {
				resolved = path.Join(cur, target)
			}
			rest := path.Join(append([]string{resolved}, parts[i+1:]...)...)
			return l.fromRoot(root, rest, depth+1)
		}
		if i == len(parts)-1 {
			if fi.IsDir() {
				return l.tree(root, next)
			}
			l.File(next, filepath.Join(root, next), int64(fi.Mode().Perm()))
			return nil
		}
		cur = next
	}
	return nil
}

// tree adds the directory dir of root recursively, links as links.
func (l *LayerBuilder) tree(root, dir string) error {
	return filepath.Walk(filepath.Join(root, dir), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l.Symlink(rel, t)
		case info.IsDir():
			l.Dir(rel, int64(info.Mode().Perm()))
		case info.Mode().IsRegular():
			l.File(rel, p, int64(info.Mode().Perm()))
		}
		return nil
	})
}

// WriteTo writes the layer as an uncompressed tar file at dst and returns it
// with its digest. Entries are sorted and timestamps fixed, so equal inputs
// give equal digests.
func (l *LayerBuilder) WriteTo(dst string) (Layer, error) {
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	f, err := os.Create(dst)
	if err != nil {
		return Layer{}, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	for _, n := range names {
		if err := writeEntry(tw, l.entries[n]); err != nil {
			return Layer{}, fmt.Errorf("%s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return Layer{}, err
	}
	if err := f.Close(); err != nil {
		return Layer{}, err
	}
	return Layer{Path: dst, DiffID: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

func writeEntry(tw *tar.Writer, e entry) error {
	hdr := &tar.Header{Name: e.name, Mode: e.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
	switch {
	case e.dir:
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
		return tw.WriteHeader(hdr)
	case e.link != "":
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = e.link
		return tw.WriteHeader(hdr)
	case e.hostFile:
		src, err := os.Open(e.src)
		if err != nil {
			return err
		}
		defer func() { _ = src.Close() }()
		fi, err := src.Stat()
		if err != nil {
			return err
		}
		hdr.Typeflag = tar.TypeReg
		hdr.Size = fi.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		return err
	default:
		hdr.Typeflag = tar.TypeReg
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
}

// DigestFile returns the Layer of an existing tar.
func DigestFile(p string) (Layer, error) {
	f, err := os.Open(p)
	if err != nil {
		return Layer{}, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Layer{}, err
	}
	return Layer{Path: p, DiffID: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}
