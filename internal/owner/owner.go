// Package owner names the process that made something — a cluster, a build
// container, a temporary directory — so that what a killed process left
// (SIGKILL cannot be caught) can be told apart from what a live one is
// still using, found, and removed.
//
// A token is "<pid>.<start>": the process ID and its start time in clock
// ticks since boot (field 22 of /proc/<pid>/stat), so a recycled PID is not
// mistaken for the owner.
package owner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

var (
	selfOnce  sync.Once
	selfToken string
)

// Token is the current process's token.
func Token() string {
	selfOnce.Do(func() {
		pid := os.Getpid()
		selfToken = fmt.Sprintf("%d.%d", pid, startTime(pid))
	})
	return selfToken
}

// PID is the process ID in token t (0 if t is not a token).
func PID(t string) int {
	pid, _, _ := parse(t)
	return pid
}

// Alive reports whether the process of token t still runs. A string that is
// not a token counts as alive: nothing is removed on a guess.
func Alive(t string) bool {
	pid, start, ok := parse(t)
	if !ok {
		return true
	}
	return startTime(pid) == start
}

func parse(t string) (pid int, start uint64, ok bool) {
	p, s, found := strings.Cut(t, ".")
	if !found {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	return pid, start, err1 == nil && err2 == nil && pid > 0
}

// startTime is the start time of process pid, 0 when it does not exist.
func startTime(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// TokenIn returns the token in name, which must look like
// prefix + token + "-" + anything (or prefix + token alone).
func TokenIn(name, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return "", false
	}
	t, _, _ := strings.Cut(rest, "-")
	_, _, ok = parse(t)
	return t, ok
}

// SweepDir removes the entries of dir named prefix + token + ... whose
// process is gone, and returns their paths.
func SweepDir(dir, prefix string) []string {
	entries, _ := os.ReadDir(dir)
	var removed []string
	for _, e := range entries {
		t, ok := TokenIn(e.Name(), prefix)
		if !ok || Alive(t) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// TempPrefix starts the name of a process's own temporary directory.
const TempPrefix = "skewproof-"

// TempRoot makes a temporary directory of this process under the system's
// ($TMPDIR or /tmp), points TMPDIR at it so that every temporary file of
// this process and of the commands it starts lands inside, and returns a
// function that removes it. Those of killed processes are removed first.
func TempRoot() (remove func(), err error) {
	parent := os.TempDir()
	SweepDir(parent, TempPrefix)
	dir := filepath.Join(parent, TempPrefix+Token()+"-tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return func() {}, err
	}
	old, had := os.LookupEnv("TMPDIR")
	_ = os.Setenv("TMPDIR", dir)
	return func() {
		if had {
			_ = os.Setenv("TMPDIR", old)
		} else {
			_ = os.Unsetenv("TMPDIR")
		}
		_ = os.RemoveAll(dir)
	}, nil
}
