package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKeyCoversEveryInput(t *testing.T) {
	a := Key("node", "v1.37.2", "v1.34.4")
	if a != Key("node", "v1.37.2", "v1.34.4") {
		t.Fatal("Key is not deterministic")
	}
	for _, other := range [][]string{{"node", "v1.37.2", "v1.35.4"}, {"node", "v1.37.2v1.34.4"}, {"node", "v1.37.2", "v1.34.4", ""}} {
		if Key(other...) == a {
			t.Errorf("Key(%q) collides with Key(node, v1.37.2, v1.34.4)", other)
		}
	}
}

// A failed fill leaves nothing; a complete entry is not filled again.
func TestAtomicDir(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "entry")
	if err := AtomicDir(context.Background(), dst, nil, func(tmp string) error {
		os.WriteFile(filepath.Join(tmp, "half"), nil, 0o644)
		return errors.New("interrupted")
	}); err == nil {
		t.Fatal("the fill's error is lost")
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) || Complete(dst) {
		t.Fatalf("a failed fill left %s (%v)", dst, err)
	}
	fills := 0
	for range 2 {
		if err := AtomicDir(context.Background(), dst, nil, func(tmp string) error {
			fills++
			return os.WriteFile(filepath.Join(tmp, "x"), []byte("x"), 0o644)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if fills != 1 || !Complete(dst) {
		t.Errorf("filled %d times, complete %v; want once, true", fills, Complete(dst))
	}
	if b, err := os.ReadFile(filepath.Join(dst, "x")); err != nil || string(b) != "x" {
		t.Errorf("entry content %q, %v", b, err)
	}
}

// A change of the image format keys images anew, never compiled binaries.
func TestImageKeyIsApartFromKey(t *testing.T) {
	if ImageKey("node", "v1.37.2") == Key("node", "v1.37.2") {
		t.Error("ImageKey does not add ImageVersion")
	}
	if ImageKey("node", "v1.37.2") != Key("image-format="+ImageVersion, "node", "v1.37.2") {
		t.Error("ImageKey is not Key with the image format first")
	}
}

// Of builds of one entry at once, one fills it and the others wait and reuse
// it; what a killed build left beside the entry is removed.
func TestAtomicDirConcurrentAndSwept(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "entry")
	dead := filepath.Join(parent, ".entry.tmp-999999999.1-x")
	other := filepath.Join(parent, ".other.tmp-999999999.1-x")
	for _, d := range []string{dead, other} {
		if err := os.MkdirAll(filepath.Join(d, "half"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var fills, waits atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = AtomicDir(context.Background(), dst, func(string, ...any) { waits.Add(1) }, func(tmp string) error {
				fills.Add(1)
				time.Sleep(300 * time.Millisecond)
				return os.WriteFile(filepath.Join(tmp, "x"), []byte("x"), 0o644)
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fills.Load() != 1 {
		t.Errorf("filled %d times by 4 concurrent builds, want once", fills.Load())
	}
	if waits.Load() == 0 {
		t.Error("no build said it waits for another")
	}
	if b, err := os.ReadFile(filepath.Join(dst, "x")); err != nil || string(b) != "x" {
		t.Errorf("entry content %q, %v", b, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the temporary directory of a killed build of the entry is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another entry's temporary directory was removed: %v", err)
	}
}

// A lock waiter gives up when its context ends.
func TestLockHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	unlock, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock: %v, want the context's deadline", err)
	}
}

func TestHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	if Held(path) {
		t.Fatal("Held with no lock file")
	}
	unlock, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Held(path) {
		t.Error("not Held while locked")
	}
	if !Held(path) {
		t.Error("Held took the lock it tested")
	}
	unlock()
	if Held(path) {
		t.Error("Held after unlock")
	}
}
