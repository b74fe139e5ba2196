// Package progress prints what long work is doing, one line per step with
// the time elapsed since the start (image builds, cluster boots, suite
// runs). Every command makes one Progress (New) and hands it down; packages
// that log through log/slog show their records as its lines (Logger).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress prints one line per step with the time elapsed since the start,
// so that long work (image builds, cluster boots) shows what it is doing.
type Progress struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

// New returns a Progress writing to w (os.Stderr when nil). A nil
// *Progress prints nothing.
func New(w io.Writer) *Progress {
	if w == nil {
		w = os.Stderr
	}
	return &Progress{out: w, start: time.Now()}
}

// Step prints a progress line.
func (p *Progress) Step(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "[%7.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// Timed runs fn as a named step and reports its duration.
func (p *Progress) Timed(name string, fn func() error) error {
	p.Step("%s ...", name)
	t := time.Now()
	err := fn()
	if err != nil {
		p.Step("%s failed after %.1fs", name, time.Since(t).Seconds())
		return err
	}
	p.Step("%s done in %.1fs", name, time.Since(t).Seconds())
	return nil
}
