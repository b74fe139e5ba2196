package release

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/served/servedtest"
)

func TestCheckServedIn(t *testing.T) {
	served := servedtest.Sorted()
	if err := CheckServedIn(served, MustParseVersion("1.34.4")); err != nil {
		t.Errorf("1.34.4: %v", err)
	}
	err := CheckServedIn(served, MustParseVersion("1.36.2"))
	if err == nil || !strings.Contains(err.Error(), "served v1.36 releases: 1.36.1, 1.36.3") {
		t.Errorf("1.36.2: %v", err)
	}
	err = CheckServedIn(served, MustParseVersion("1.28.3"))
	if err == nil || !strings.Contains(err.Error(), "no v1.28 release is") || !strings.Contains(err.Error(), "1.29.6") {
		t.Errorf("1.28.3: %v", err)
	}
}
