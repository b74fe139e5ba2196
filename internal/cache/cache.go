// Package cache is skewproof's content-addressed build cache (the node
// images of clusters, the layers of the agent image): keys that hash every
// input of an artefact, and entries that appear only when complete.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"

	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/owner"
)

// BuilderVersion is part of every cache key: bump it whenever what the
// builder produces changes in a way the other inputs do not capture, so that
// stale artefacts are never reused (every cached artefact is then rebuilt
// once: Kubernetes from source, the base image with debootstrap).
//
// DO NOT bump BuilderVersion for a change of how images are written (the
// archive writer, image config, layer order): that would recompile every
// cached Kubernetes release (about 40 minutes on two cores, and CI runs on
// the same cache). Bump ImageVersion instead: it is part of the keys of
// node images and image archives only (ImageKey), never of compiled
// binaries or the debootstrap base.
const BuilderVersion = "4"

// ImageVersion is part of the keys of node images and image archives
// (ImageKey). "2": archives written with go-containerregistry, with the
// host's architecture. "3": no CoreDNS image (the clusters have no cluster
// DNS).
const ImageVersion = "3"

// ImageKey is Key for image archives and node images: it adds ImageVersion.
func ImageKey(parts ...string) string {
	return Key(append([]string{"image-format=" + ImageVersion}, parts...)...)
}

// Key hashes every input of an artefact, together with the builder version
// and the Go toolchain, into a short content address.
func Key(parts ...string) string {
	h := sha256.New()
	h.Write([]byte("skewproof-builder=" + BuilderVersion + "\n"))
	h.Write([]byte("go=" + runtime.Version() + "\n"))
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Entry returns the directory <cache>/<name>-<key> of skewproof's cache
// directory, where key hashes keyParts (Key: with the builder version and
// the Go toolchain, every input of what the entry holds), filling it with
// fill when it is not complete yet. fill writes into a temporary directory
// that becomes the entry only when fill succeeds (AtomicDir).
func Entry(ctx context.Context, name string, keyParts []string, fill func(tmp string) error) (string, error) {
	dir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	entry := filepath.Join(dir, name+"-"+Key(keyParts...))
	return entry, AtomicDir(ctx, entry, nil, fill)
}

// Complete reports whether the entry at dir was completely written.
func Complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".complete"))
	return err == nil
}

// AtomicDir builds into a temporary directory beside dst and renames it into
// place only when fill succeeds, so an interrupted build never leaves a
// half-filled cache entry. A complete dst is kept as it is. It holds dst's
// Lock meanwhile: of two processes building the same entry at once, one
// builds and the other waits and then reuses it.
func AtomicDir(ctx context.Context, dst string, say func(string, ...any), fill func(tmp string) error) error {
	if Complete(dst) {
		return nil
	}
	unlock, err := Lock(ctx, dst, say)
	if err != nil {
		return err
	}
	defer unlock()
	return FillLocked(dst, fill)
}

// FillLocked is AtomicDir for a caller that holds dst's Lock.
func FillLocked(dst string, fill func(tmp string) error) error {
	if Complete(dst) {
		return nil
	}
	parent, prefix := filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-"
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	// What a killed build of this entry left.
	owner.SweepDir(parent, prefix)
	tmp, err := os.MkdirTemp(parent, prefix+owner.Token()+"-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
