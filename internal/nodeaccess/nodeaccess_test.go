package nodeaccess

import (
	"context"
	"testing"
)

func TestFromEnv(t *testing.T) {
	ctx := context.Background()
	for value, want := range map[string]Access{"docker": Docker, "none": None, "": None, "ssh": None} {
		// No node to probe: what is not given is None.
		if got := FromEnv(ctx, value); got != want {
			t.Errorf("FromEnv(%q) = %q, want %q", value, got, want)
		}
	}
	if got := Probe(ctx, "skewproof-no-such-node-container"); got != None {
		t.Errorf("Probe of a node that is no container = %q, want none", got)
	}
}
