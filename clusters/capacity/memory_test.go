package capacity

import (
	"strings"
	"testing"
)

func TestClustersThatFit(t *testing.T) {
	fit, avail := ClustersThatFit(4)
	if avail > 0 && fit != max(1, avail/ClusterMemoryMiB(4)) || fit < 1 {
		t.Errorf("ClustersThatFit(4) = %d, %d", fit, avail)
	}
	if err := CheckClusterFits(1); avail > ClusterMemoryMiB(1) && err != nil {
		t.Errorf("one worker refused with %d MiB available: %v", avail, err)
	}
	if err := CheckClusterFits(avail); avail > 0 && (err == nil || !strings.Contains(err.Error(), "MiB available")) {
		t.Errorf("%d workers accepted with %d MiB available: %v", avail, avail, err)
	}
}
