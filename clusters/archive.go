package clusters

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// This file writes container images without any registry or image builder:
// layers are plain tar files, images are "docker save" archives that both
// `docker load` and `ctr images import` accept.

// layerFile is an uncompressed layer tar on disk with its digest.
type layerFile struct {
	Path   string
	DiffID string // sha256:<hex> of the uncompressed tar
}

// imageSpec is one image of an archive.
type imageSpec struct {
	Tags       []string // full references, e.g. registry.k8s.io/pause:3.10.2
	Layers     []layerFile
	Entrypoint []string
	Cmd        []string
	Env        []string
	StopSignal string
	Labels     map[string]string
	WorkingDir string
	User       string
}

type layerEntry struct {
	name     string // path inside the image, without leading slash
	src      string // file on the host to copy (regular files)
	data     []byte // literal content (when src is empty and not a dir/link)
	link     string // symlink target
	dir      bool
	mode     int64
	hostFile bool
}

// layerBuilder collects the entries of a layer.
type layerBuilder struct {
	entries map[string]layerEntry
}

func newLayer() *layerBuilder { return &layerBuilder{entries: map[string]layerEntry{}} }

func (l *layerBuilder) ensureParents(name string) {
	for d := path.Dir(name); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, ok := l.entries[d]; !ok {
			l.entries[d] = layerEntry{name: d, dir: true, mode: 0o755}
		}
	}
}

// File adds a host file at name with the given mode.
func (l *layerBuilder) File(name, src string, mode int64) *layerBuilder {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	l.ensureParents(name)
	l.entries[name] = layerEntry{name: name, src: src, mode: mode, hostFile: true}
	return l
}

// Data adds literal content at name.
func (l *layerBuilder) Data(name string, data []byte, mode int64) *layerBuilder {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	l.ensureParents(name)
	l.entries[name] = layerEntry{name: name, data: data, mode: mode}
	return l
}

// Symlink adds a symbolic link.
func (l *layerBuilder) Symlink(name, target string) *layerBuilder {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	l.ensureParents(name)
	l.entries[name] = layerEntry{name: name, link: target, mode: 0o777}
	return l
}

// Dir adds a directory.
func (l *layerBuilder) Dir(name string, mode int64) *layerBuilder {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	l.ensureParents(name)
	l.entries[name] = layerEntry{name: name, dir: true, mode: mode}
	return l
}

// FromRoot adds the file at abs (an absolute path inside the root file
// system at root) following symbolic links inside root: every link met on
// the way is added as a link, and the final regular file or directory is
// copied (directories recursively).
func (l *layerBuilder) FromRoot(root, abs string) error {
	return l.fromRoot(root, abs, 0)
}

func (l *layerBuilder) fromRoot(root, abs string, depth int) error {
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
				return filepath.Walk(filepath.Join(root, next), func(p string, info os.FileInfo, err error) error {
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
			l.File(next, filepath.Join(root, next), int64(fi.Mode().Perm()))
			return nil
		}
		cur = next
	}
	return nil
}

// WriteTo writes the layer as an uncompressed tar file at dst and returns it
// with its digest. Entries are sorted and timestamps fixed, so equal inputs
// give equal digests.
func (l *layerBuilder) WriteTo(dst string) (layerFile, error) {
	names := make([]string, 0, len(l.entries))
	for n := range l.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	f, err := os.Create(dst)
	if err != nil {
		return layerFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	epoch := time.Unix(0, 0)
	for _, n := range names {
		e := l.entries[n]
		hdr := &tar.Header{Name: n, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.dir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
			if err := tw.WriteHeader(hdr); err != nil {
				return layerFile{}, err
			}
		case e.link != "":
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.link
			if err := tw.WriteHeader(hdr); err != nil {
				return layerFile{}, err
			}
		case e.hostFile:
			src, err := os.Open(e.src)
			if err != nil {
				return layerFile{}, err
			}
			fi, err := src.Stat()
			if err != nil {
				src.Close()
				return layerFile{}, err
			}
			hdr.Typeflag = tar.TypeReg
			hdr.Size = fi.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				src.Close()
				return layerFile{}, err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return layerFile{}, err
			}
		default:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.data))
			if err := tw.WriteHeader(hdr); err != nil {
				return layerFile{}, err
			}
			if _, err := tw.Write(e.data); err != nil {
				return layerFile{}, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return layerFile{}, err
	}
	if err := f.Close(); err != nil {
		return layerFile{}, err
	}
	return layerFile{Path: dst, DiffID: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// digestFile returns the layerFile of an existing tar.
func digestFile(p string) (layerFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return layerFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return layerFile{}, err
	}
	return layerFile{Path: p, DiffID: "sha256:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// writeImageArchive writes images as one "docker save" archive to w.
func writeImageArchive(w io.Writer, images []imageSpec) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	type manifestEntry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var manifest []manifestEntry
	written := map[string]bool{}
	for _, img := range images {
		var diffIDs, layerPaths []string
		for _, lf := range img.Layers {
			hexID := strings.TrimPrefix(lf.DiffID, "sha256:")
			lp := hexID + "/layer.tar"
			diffIDs = append(diffIDs, lf.DiffID)
			layerPaths = append(layerPaths, lp)
			if written[lp] {
				continue
			}
			written[lp] = true
			f, err := os.Open(lf.Path)
			if err != nil {
				return err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: hexID + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
				f.Close()
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: lp, Typeflag: tar.TypeReg, Mode: 0o644, Size: fi.Size(), ModTime: epoch}); err != nil {
				f.Close()
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		env := img.Env
		if len(env) == 0 {
			env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		}
		cfg := map[string]any{
			"architecture": "amd64",
			"os":           "linux",
			"created":      epoch.UTC().Format(time.RFC3339),
			"config": map[string]any{
				"Env":        env,
				"Entrypoint": img.Entrypoint,
				"Cmd":        img.Cmd,
				"StopSignal": img.StopSignal,
				"Labels":     img.Labels,
				"WorkingDir": img.WorkingDir,
				"User":       img.User,
			},
			"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
		}
		raw, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		cfgName := hex.EncodeToString(sum[:]) + ".json"
		if !written[cfgName] {
			written[cfgName] = true
			if err := tw.WriteHeader(&tar.Header{Name: cfgName, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(raw)), ModTime: epoch}); err != nil {
				return err
			}
			if _, err := tw.Write(raw); err != nil {
				return err
			}
		}
		manifest = append(manifest, manifestEntry{Config: cfgName, RepoTags: img.Tags, Layers: layerPaths})
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "manifest.json", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(raw)), ModTime: epoch}); err != nil {
		return err
	}
	if _, err := tw.Write(raw); err != nil {
		return err
	}
	return tw.Close()
}
