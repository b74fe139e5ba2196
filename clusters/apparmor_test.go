package clusters

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	senv "github.com/skewproof/skewproof/suites/env"
)

func TestParseLdd(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffd1a5f0000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f092e80e000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f092eb6a000)
`
	got, err := parseLdd(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseLdd("\tlibfoo.so.1 => not found\n" + out); err == nil || !strings.Contains(err.Error(), "libfoo.so.1") {
		t.Errorf("a missing library must be an error naming it: %v", err)
	}
}

// A build host without apt/dpkg cannot provide the package: the error says
// so (ErrNoAppArmorPackage), and the agent image is built without the layer.
func TestAppArmorParserLayerWithoutPackageManager(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(senv.CacheDir, t.TempDir())
	_, err := AppArmorParserLayer(context.Background())
	if !errors.Is(err, ErrNoAppArmorPackage) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want ErrNoAppArmorPackage naming the missing tool", err)
	}
}
