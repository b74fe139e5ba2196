package progress

import (
	"bytes"
	"io"
	"sync"
)

// Prefixed returns a writer that puts prefix before every line written to
// it and passes them to w in one write, so that the lines of a Progress on
// it (whose writes are whole lines) say whose they are. Prefixed writers
// that share w and mu keep each other's lines whole; mu may be nil.
func Prefixed(w io.Writer, mu *sync.Mutex, prefix string) io.Writer {
	return &prefixWriter{mu: mu, w: w, prefix: prefix}
}

type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
}

func (pw *prefixWriter) Write(b []byte) (int, error) {
	if pw.mu != nil {
		pw.mu.Lock()
		defer pw.mu.Unlock()
	}
	var buf bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 {
			buf.WriteString(pw.prefix)
			buf.Write(line)
		}
	}
	if _, err := pw.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
