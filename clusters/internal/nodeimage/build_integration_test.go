//go:build integration

package nodeimage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/internal/progress"
)

// watchWriter records what a Progress prints and closes seen once a line
// contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

// host runs the integration tests' own Docker commands.
var host command.Host

func (w *watchWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	os.Stderr.Write(b)
	w.buf.Write(b)
	if w.want != "" && strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(b), nil
}

func (w *watchWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// A node-image build interrupted while it assembles leaves no image, no
// build container and no work directory that a later build could trust;
// of two builds of the same image at once, one builds it and the other
// waits and reuses it. (The worker image is rebuilt from cached binaries:
// about half a minute each.)
func TestIntegrationNodeImageBuildInterruptedThenConcurrent(t *testing.T) {
	ctx := context.Background()
	spec := Spec{ControlPlane: "1.37.2", Kubelet: "1.34.4"}
	ref, err := Build(ctx, command.Host{Progress: progress.New(nil)}, spec)
	if err != nil {
		t.Fatal(err)
	}
	cacheDir, err := cachedir.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	leftovers := func() []string {
		var l []string
		if out, _ := host.Docker(ctx, "ps", "-a", "--filter", "name=^"+BuildContainerPrefix, "--format", "{{.Names}}"); out != "" {
			l = append(l, "containers: "+out)
		}
		if m, _ := filepath.Glob(filepath.Join(cacheDir, ".node-build-*")); len(m) > 0 {
			l = append(l, "work directories: "+strings.Join(m, " "))
		}
		return l
	}
	// Untag it (a backup tag keeps it, also for a cluster using it) so that
	// the builds below make it anew; put the tag back if they do not.
	backup := "skewproof-build-test-backup:" + strings.TrimPrefix(ref, nodeImageRepo+":")
	if _, err := host.Docker(ctx, "tag", ref, backup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !host.ImageExists(ctx, ref) {
			host.Docker(ctx, "tag", backup, ref)
		}
		host.Docker(ctx, "rmi", "-f", backup)
	})
	if _, err := host.Docker(ctx, "rmi", ref); err != nil {
		t.Fatal(err)
	}

	// Interrupted while assembling.
	w := &watchWriter{want: "assembling node image", seen: make(chan struct{})}
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := Build(ictx, command.Host{Progress: progress.New(w)}, spec); done <- err }()
	select {
	case <-w.seen:
		time.Sleep(2 * time.Second)
		cancel()
	case err := <-done:
		cancel()
		t.Fatalf("the build ended before it assembled: %v", err)
	}
	if err := <-done; err == nil {
		t.Fatal("the interrupted build reported success")
	}
	if host.ImageExists(ctx, ref) {
		t.Errorf("the interrupted build left image %s", ref)
	}
	if l := leftovers(); len(l) > 0 {
		t.Errorf("the interrupted build left %v", l)
	}

	// Two at once: one builds, the other waits for it and reuses it.
	var wg sync.WaitGroup
	logs := make([]*watchWriter, 2)
	refs := make([]string, 2)
	errs := make([]error, 2)
	for i := range logs {
		logs[i] = &watchWriter{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs[i], errs[i] = Build(ctx, command.Host{Progress: progress.New(logs[i])}, spec)
		}()
	}
	wg.Wait()
	built, reused := 0, 0
	for i := range logs {
		if errs[i] != nil || refs[i] != ref {
			t.Fatalf("build %d: %s, %v; want %s", i, refs[i], errs[i], ref)
		}
		if strings.Contains(logs[i].String(), "assembling node image") {
			built++
		}
		if strings.Contains(logs[i].String(), "built meanwhile by another process") && strings.Contains(logs[i].String(), "waiting for process") {
			reused++
		}
	}
	if built != 1 || reused != 1 {
		t.Errorf("%d builds assembled the image and %d waited and reused it; want one each", built, reused)
	}
	if !host.ImageExists(ctx, ref) {
		t.Errorf("no image %s after the concurrent builds", ref)
	}
	if l := leftovers(); len(l) > 0 {
		t.Errorf("the concurrent builds left %v", l)
	}
}
