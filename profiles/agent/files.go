package agent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// The files the agent puts on the node (seccomp profiles, static pod
// manifests, the records of loaded AppArmor profiles) are written, compared
// and swept the same way.

// writeAtomic writes content to final through a temporary file beside it,
// "."+tmpBase+".tmp-…" (a dot file: the kubelet passes over it, the sweeps
// know it), made perm, then renamed: a reader sees the old file or the new
// one, never part of one. The temporary file does not outlive a failure.
func writeAtomic(final, tmpBase, content string, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(final), "."+tmpBase+".tmp-")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(content)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), perm)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), final)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
	}
	return werr
}

// fileHolds reports whether the file at path holds exactly content.
func fileHolds(path, content string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Equal(b, []byte(content))
}

// listDir lists dir; a missing dir holds nothing.
func listDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

// removeStaleFiles removes the files of dir whose names stale picks, and
// logs each by its path on the node (onNode) with why it went.
func (a *Agent) removeStaleFiles(dir string, stale func(name string) bool, onNode func(name string) string, why string) error {
	entries, err := listDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !stale(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		} else {
			a.logf("removed %s (%s)", onNode(e.Name()), why)
		}
	}
	return errors.Join(errs...)
}
