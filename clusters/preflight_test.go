package clusters

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/clusters/capacity"
)

func TestMemoryCheck(t *testing.T) {
	fit, avail := capacity.ClustersThatFit(4)
	if c := memoryCheck(); avail > 0 && !strings.Contains(c.Value, fmt.Sprintf("%d cluster(s) of 1+4 nodes", fit)) {
		t.Errorf("memory check %+v", c)
	}
}
