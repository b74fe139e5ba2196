package clusters

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// A package's log records print as progress lines, attributes as key=value.
func TestProgressLogger(t *testing.T) {
	var buf bytes.Buffer
	l := NewProgress(&buf).Logger().With("node", "w1").WithGroup("g")
	l.Info("installed", "profile", "a b", "n", 3)
	l.Debug("hidden")
	l.Error("failed", "err", errors.New("boom"))
	want := regexp.MustCompile(`^\[ *[0-9.]+s\] installed node=w1 g\.profile="a b" g\.n=3\n\[ *[0-9.]+s\] failed \[error\] node=w1 g\.err=boom\n$`)
	if !want.Match(buf.Bytes()) {
		t.Errorf("got:\n%s", buf.String())
	}
}

func TestClustersThatFit(t *testing.T) {
	fit, avail := ClustersThatFit(4)
	if avail > 0 && fit != max(1, avail/ClusterMemoryMiB(4)) || fit < 1 {
		t.Errorf("ClustersThatFit(4) = %d, %d", fit, avail)
	}
	if c := memoryCheck(); avail > 0 && !strings.Contains(c.Value, fmt.Sprintf("%d cluster(s) of 1+4 nodes", fit)) {
		t.Errorf("memory check %+v", c)
	}
	if err := CheckClusterFits(1); avail > ClusterMemoryMiB(1) && err != nil {
		t.Errorf("one worker refused with %d MiB available: %v", avail, err)
	}
	if err := CheckClusterFits(avail); avail > 0 && (err == nil || !strings.Contains(err.Error(), "MiB available")) {
		t.Errorf("%d workers accepted with %d MiB available: %v", avail, avail, err)
	}
}
