package progress

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Lines of legs that run at once say whose they are.
func TestPrefixed(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	w := Prefixed(&buf, &mu, "a: ")
	fmt.Fprintf(w, "one\ntwo\n")
	if got := buf.String(); got != "a: one\na: two\n" {
		t.Errorf("got %q", got)
	}
}
