package cache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	if err := AtomicDir(dst, func(tmp string) error {
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
		if err := AtomicDir(dst, func(tmp string) error {
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
