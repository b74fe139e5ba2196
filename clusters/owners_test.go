package clusters

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/internal/owner"
)

// A cluster's state comes from its owner record: a live owner uses it, a
// killed run's (temporary) cluster is left behind with the remedy, one kept
// on purpose is kept.
func TestDescribeOwner(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	write := func(name, token string, temporary bool) {
		path, err := ownerPath(name)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		b, _ := json.Marshal(ownerRecord{Owner: token, Command: "/usr/local/bin/skewproof run --name " + name, Temporary: temporary})
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("live", owner.Token(), true)
	write("killed", "999999999.1", true)
	write("kept", "999999999.1", false)
	for _, c := range []struct {
		name, want string
		left       bool
	}{
		{"live", "in use by process", false},
		{"killed", "left by process 999999999 (skewproof run --name), which was killed before it could delete it; remove it: skewproof cluster down --name killed", true},
		{"kept", "kept", false},
		{"unrecorded", "made outside skewproof's record", false},
	} {
		l := describe(c.name)
		if l.Left != c.left || !strings.HasPrefix(l.State, c.want) {
			t.Errorf("%s: %+v, want left=%v and a state starting %q", c.name, l, c.left, c.want)
		}
	}
	// Down removes the record; a failed early Up removes its own.
	removeOwner("killed")
	if l := describe("killed"); l.Left {
		t.Errorf("record still there after removeOwner: %+v", l)
	}
	e := ExistsError{Name: "x", State: "being made by process 7 (skewproof run --name)"}
	if got := e.Error(); got != `cluster "x" is being made by process 7 (skewproof run --name); choose another --name` {
		t.Errorf("ExistsError for a cluster being made: %s", got)
	}
}
