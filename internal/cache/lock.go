package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/skewproof/skewproof/internal/owner"
)

// Lock takes the exclusive lock of what is built at path (the lock file is
// path + ".lock") and returns the function that releases it. While another
// process holds it, Lock waits — saying once, through say, which process it
// waits for — until it is released or ctx ends. The lock is an flock(2): it
// goes with its process, so a killed build never blocks the next one.
func Lock(ctx context.Context, path string, say func(format string, args ...any)) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !said && say != nil {
			holder, _ := os.ReadFile(f.Name())
			say("waiting for process %d, which is building %s", owner.PID(strings.TrimSpace(string(holder))), filepath.Base(path))
			said = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(owner.Token()+"\n"), 0)
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// Held reports whether the lock of what is built at path (Lock) is held
// now, by another process or another Lock of this one.
func Held(path string) bool {
	f, err := os.Open(path + ".lock")
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
