package progress

import (
	"bytes"
	"errors"
	"regexp"
	"testing"
)

// A package's log records print as progress lines, attributes as key=value.
func TestProgressLogger(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf).Logger().With("node", "w1").WithGroup("g")
	l.Info("installed", "profile", "a b", "n", 3)
	l.Debug("hidden")
	l.Error("failed", "err", errors.New("boom"))
	want := regexp.MustCompile(`^\[ *[0-9.]+s\] installed node=w1 g\.profile="a b" g\.n=3\n\[ *[0-9.]+s\] failed \[error\] node=w1 g\.err=boom\n$`)
	if !want.Match(buf.Bytes()) {
		t.Errorf("got:\n%s", buf.String())
	}
}
