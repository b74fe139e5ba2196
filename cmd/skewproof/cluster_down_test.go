package main

import (
	"strings"
	"testing"
)

// cluster down of a cluster that does not exist says that it found none,
// not that it deleted it (needs the Docker daemon, as make test has it).
func TestClusterDownAbsentSaysSo(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	code, _, stderr := runCaptured(t, "cluster", "down", "--name", "skewproof-absent-cluster")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "deleted") || !strings.Contains(stderr, "no cluster skewproof-absent-cluster was found") {
		t.Errorf("stderr %q: want it to say no such cluster was found", stderr)
	}
}
