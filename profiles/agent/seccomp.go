// Seccomp profiles on the node: one JSON file per SeccompProfile in this
// namespace's directory under the kubelet's seccomp root, written atomically
// and removed once its object is gone.

package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/profiles/api"
)

func (a *Agent) fileIs(p api.Profile) bool {
	b, err := os.ReadFile(filepath.Join(a.Dir(), p.Name+".json"))
	return err == nil && bytes.Equal(b, []byte(p.Content))
}

// writeSeccomp writes the profile file atomically (temporary file, rename).
func (a *Agent) writeSeccomp(p api.Profile) error {
	if !json.Valid([]byte(p.Content)) {
		return errors.New("the profile content is not valid JSON")
	}
	if err := api.ValidateProfileName(p.Name); err != nil {
		return err
	}
	dir := a.Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", a.nodePath(dir), err)
	}
	final := filepath.Join(dir, p.Name+".json")
	tmp, err := os.CreateTemp(dir, "."+p.Name+".tmp-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", a.nodePath(final), err)
	}
	_, werr := tmp.WriteString(p.Content)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), final)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", a.nodePath(final), werr)
	}
	return nil
}

// removeStale deletes the seccomp files of profiles that no longer exist
// (want holds "SeccompProfile/<name>" of those that do).
func (a *Agent) removeStale(want map[string]bool) error {
	entries, err := os.ReadDir(a.Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || want[api.KindSeccompProfile+"/"+strings.TrimSuffix(e.Name(), ".json")] {
			continue
		}
		if !strings.HasSuffix(e.Name(), ".json") && !strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(a.Dir(), e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		} else {
			a.logf("removed %s (its profile is gone)", a.nodePath(filepath.Join(a.Dir(), e.Name())))
		}
	}
	a.removeEmptyDirs()
	return errors.Join(errs...)
}

// removeEmptyDirs removes the agent's seccomp directory and the project's
// directory above it once they hold nothing (another namespace's agent may
// still have files there: then they stay).
func (a *Agent) removeEmptyDirs() {
	if os.Remove(a.Dir()) == nil {
		_ = os.Remove(filepath.Dir(a.Dir()))
	}
}
