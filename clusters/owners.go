// Who made a cluster, so that one left by a killed run (SIGKILL cannot be
// caught) is told apart from one a live run is using or one kept on purpose.

package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/skewproof/skewproof/clusters/internal/command"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/internal/cachedir"

	"github.com/skewproof/skewproof/internal/cache"
	"github.com/skewproof/skewproof/internal/owner"
)

// ownerRecord is <cache>/clusters/<name>.json, written by Up before it
// creates the cluster and removed by Down.
type ownerRecord struct {
	Owner   string `json:"owner"` // owner.Token of the process
	Command string `json:"command"`
	// Temporary: the process deletes the cluster when it ends (a run
	// without --keep).
	Temporary bool `json:"temporary"`
}

// Listed is a cluster that exists and who it belongs to.
type Listed struct {
	Name string
	// PID of the process that made it (0: unknown, e.g. made by hand).
	PID int
	// Left: its process was killed before it could delete it.
	Left bool
	// State says so in words, with the remedy for a left cluster.
	State string
}

func ownerPath(name string) (string, error) {
	dir, err := cachedir.Resolve()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "clusters", name+".json"), nil
}

// claim takes the name for a new cluster: it refuses (ExistsError) when a
// cluster of that name exists or another live process is making one, and
// otherwise writes this process's owner record — under a lock, so of two
// processes claiming one name at once exactly one gets it.
func claim(ctx context.Context, h command.Host, name string, temporary bool) error {
	path, err := ownerPath(name)
	if err != nil {
		return err
	}
	unlock, err := cache.Lock(ctx, path, nil)
	if err != nil {
		return err
	}
	defer unlock()
	existing, err := list(ctx, h)
	if err != nil {
		return err
	}
	for _, n := range existing {
		if n == name {
			return ExistsError{name, describe(n).State}
		}
	}
	if b, err := os.ReadFile(path); err == nil {
		var rec ownerRecord
		if json.Unmarshal(b, &rec) == nil && owner.Alive(rec.Owner) && rec.Owner != owner.Token() {
			return ExistsError{name, fmt.Sprintf("being made by process %d (%s)", owner.PID(rec.Owner), firstWords(rec.Command, 3))}
		}
	}
	b, _ := json.Marshal(ownerRecord{Owner: owner.Token(), Command: strings.Join(os.Args, " "), Temporary: temporary})
	return os.WriteFile(path, b, 0o644)
}

func removeOwner(name string) {
	if path, err := ownerPath(name); err == nil {
		_ = os.Remove(path)
	}
}

// describe is the state of cluster name from its owner record.
func describe(name string) Listed {
	l := Listed{Name: name, State: "made outside skewproof's record (by an earlier version or by hand)"}
	path, err := ownerPath(name)
	if err != nil {
		return l
	}
	b, err := os.ReadFile(path)
	var rec ownerRecord
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return l
	}
	l.PID = owner.PID(rec.Owner)
	switch {
	case owner.Alive(rec.Owner):
		l.State = fmt.Sprintf("in use by process %d (%s)", l.PID, firstWords(rec.Command, 3))
	case rec.Temporary:
		l.Left = true
		l.State = fmt.Sprintf("left by process %d (%s), which was killed before it could delete it; remove it: skewproof cluster down --name %s",
			l.PID, firstWords(rec.Command, 3), name)
	default:
		l.State = "kept"
	}
	return l
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	if len(f) > 0 {
		f[0] = filepath.Base(f[0])
	}
	return strings.Join(f, " ")
}

// listOwned is List with each cluster's owner and state.
func listOwned(ctx context.Context, h command.Host) ([]Listed, error) {
	names, err := list(ctx, h)
	if err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(names))
	for _, n := range names {
		out = append(out, describe(n))
	}
	return out, nil
}
