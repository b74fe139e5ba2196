package image

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// SharedLibraries lists the absolute paths of the shared libraries (and the
// dynamic loader) that bin needs on this host, per ldd. A static binary has
// none.
func SharedLibraries(ctx context.Context, bin string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ldd", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return ParseLdd(string(out))
}

// ParseLdd reads ldd's output: "name => /path (addr)", "/path (addr)",
// "linux-vdso.so.1 (addr)"; a "not found" library is an error.
func ParseLdd(out string) ([]string, error) {
	var libs, missing []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var lib string
		if i := strings.Index(line, "=> "); i >= 0 {
			rest := strings.TrimSpace(line[i+3:])
			if strings.HasPrefix(rest, "not found") {
				missing = append(missing, strings.TrimSpace(line[:i]))
				continue
			}
			if f := strings.Fields(rest); len(f) > 0 {
				lib = f[0]
			}
		} else if f := strings.Fields(line); len(f) > 0 {
			lib = f[0]
		}
		if !strings.HasPrefix(lib, "/") || seen[lib] {
			continue // linux-vdso and friends have no file
		}
		seen[lib] = true
		libs = append(libs, lib)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shared libraries not found on this host: %s", strings.Join(missing, ", "))
	}
	return libs, nil
}
