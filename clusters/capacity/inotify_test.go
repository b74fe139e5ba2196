package capacity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func withInotifyLimit(t *testing.T, content string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "max_user_instances")
	if content != "" {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := inotifyInstancesFile
	inotifyInstancesFile = f
	t.Cleanup(func() { inotifyInstancesFile = old })
}

// At the kernel's default of 128 the history preset's clusters of a control
// plane and two kind workers fit one at a time (three at once ran kube-proxy
// out of instances); at kind's remedy of 512, eight.
func TestClustersThatFitInotify(t *testing.T) {
	for _, c := range []struct {
		limit   string
		workers int
		fit     int
	}{
		{"128\n", 2, 1},
		{"128\n", 4, 1},
		{"128\n", 20, 1}, // at least one: CheckInotifyFits refuses it
		{"512\n", 2, 8},
		{"512\n", 4, 5},
		{"", 2, 1},    // unknown: one
		{"x\n", 2, 1}, // unreadable: one
	} {
		withInotifyLimit(t, c.limit)
		if fit, _ := ClustersThatFitInotify(c.workers); fit != c.fit {
			t.Errorf("limit %q, %d workers: %d fit, want %d", c.limit, c.workers, fit, c.fit)
		}
	}
}

// The default cluster (4 kind workers) fits the kernel's default limit;
// three history clusters at once, or one of seven workers, do not; the
// refusal gives the remedy.
func TestCheckInotifyFits(t *testing.T) {
	withInotifyLimit(t, "128\n")
	if err := CheckInotifyFits(1, 4); err != nil {
		t.Errorf("the default cluster refused: %v", err)
	}
	for _, c := range [][2]int{{3, 2}, {2, 2}, {1, 7}} {
		err := CheckInotifyFits(c[0], c[1])
		if err == nil || !strings.Contains(err.Error(), "fs.inotify.max_user_instances is 128") || !strings.Contains(err.Error(), "sysctl -w fs.inotify.max_user_instances=512") {
			t.Errorf("%d clusters of 1+%d: %v", c[0], c[1], err)
		}
	}
	withInotifyLimit(t, "512\n")
	if err := CheckInotifyFits(3, 2); err != nil {
		t.Errorf("three history clusters refused at 512: %v", err)
	}
	withInotifyLimit(t, "")
	if err := CheckInotifyFits(9, 9); err != nil {
		t.Errorf("an unknown limit refused: %v", err)
	}
}
