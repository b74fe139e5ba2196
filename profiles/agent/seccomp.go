// Seccomp profiles on the node: one JSON file per SeccompProfile in this
// namespace's directory under the kubelet's seccomp root, written atomically
// and removed once its object is gone.

package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/profiles/api"
)

func (a *Agent) fileIs(p api.Profile) bool {
	return fileHolds(filepath.Join(a.Dir(), p.Name+".json"), p.Content)
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
	if err := writeAtomic(final, p.Name, p.Content, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", a.nodePath(final), err)
	}
	return nil
}

// removeStale deletes the seccomp files of profiles that no longer exist
// (want holds "SeccompProfile/<name>" of those that do).
func (a *Agent) removeStale(want map[string]bool) error {
	stale := func(n string) bool {
		return !want[api.KindSeccompProfile+"/"+strings.TrimSuffix(n, ".json")] && (strings.HasSuffix(n, ".json") || strings.Contains(n, ".tmp-"))
	}
	onNode := func(n string) string { return a.nodePath(filepath.Join(a.Dir(), n)) }
	if err := a.removeStaleFiles(a.Dir(), stale, onNode, "its profile is gone"); err != nil {
		return err
	}
	a.removeEmptyDirs()
	return nil
}

// removeEmptyDirs removes the agent's seccomp directory and the project's
// directory above it once they hold nothing (another namespace's agent may
// still have files there: then they stay).
func (a *Agent) removeEmptyDirs() {
	if os.Remove(a.Dir()) == nil {
		_ = os.Remove(filepath.Dir(a.Dir()))
	}
}
