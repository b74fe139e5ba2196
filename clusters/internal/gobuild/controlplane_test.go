package gobuild

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/cachedir"
)

type steps struct{ lines []string }

func (s *steps) Step(format string, args ...any)       { s.lines = append(s.lines, format) }
func (s *steps) Timed(_ string, fn func() error) error { return fn() }

// A kubelet alone comes from its release's control-plane set when that set
// is built, waits for it while another build holds it, and is built on its
// own otherwise.
func TestKubeletFromControlPlane(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	progs := map[string]string{}
	for _, n := range ControlPlaneCommands {
		progs[n] = "k8s.io/kubernetes/cmd/" + n
	}
	full := ProgramSet{Module: "k8s.io/kubernetes", Version: "v1.24.17", Programs: progs, LDFlags: kubernetesLDFlags("1.24.17")}
	dir, _ := cachedir.Resolve()
	dst := filepath.Join(dir, "bin", full.dirName())
	ctx := context.Background()

	if _, ok, err := kubeletFromControlPlane(ctx, &steps{}, full); err != nil || ok {
		t.Fatalf("no set built: ok %v, err %v; want the kubelet built on its own", ok, err)
	}

	// Another build holds the set: wait for it, then take it.
	unlock, err := cache.Lock(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = cache.FillLocked(dst, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "kubelet"), nil, 0o755) })
		unlock()
	}()
	got, ok, err := kubeletFromControlPlane(ctx, &steps{}, full)
	if err != nil || !ok || got != dst {
		t.Fatalf("set being built: %q, %v, %v; want %s after waiting", got, ok, err, dst)
	}
	if _, err := os.Stat(filepath.Join(got, "kubelet")); err != nil {
		t.Error(err)
	}

	// Built: taken at once, for this release only.
	if got, ok, _ := kubeletFromControlPlane(ctx, &steps{}, full); !ok || got != dst {
		t.Errorf("set built: %q, %v", got, ok)
	}
	other := full
	other.Version, other.LDFlags = "v1.25.16", kubernetesLDFlags("1.25.16")
	if _, ok, _ := kubeletFromControlPlane(ctx, &steps{}, other); ok {
		t.Error("the kubelet of another release taken from the set of v1.24.17")
	}
}
