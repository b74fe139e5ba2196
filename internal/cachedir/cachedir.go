// Package cachedir says where skewproof keeps its caches: built binaries,
// image archives, the UML kernel and disks, the served-versions list. It
// imports nothing of skewproof's, so that any package may ask.
package cachedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Env names the variable that sets the cache directory (default
// $XDG_CACHE_HOME/skewproof).
const Env = "SKEWPROOF_CACHE_DIR"

// Resolve returns the one directory skewproof keeps its caches in: $Env if
// set, else <user cache dir>/skewproof, as an absolute path, created if it
// does not exist.
func Resolve() (string, error) {
	d := os.Getenv(Env)
	if d == "" {
		u, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("finding the user cache directory: %w; set %s", err, Env)
		}
		d = filepath.Join(u, "skewproof")
	}
	dir, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the cache directory %s: %w (set %s)", dir, err, Env)
	}
	return dir, nil
}
