package nodeaccess

import (
	"context"
	"testing"
)

func TestProbe(t *testing.T) {
	ctx := context.Background()
	if got := Probe(ctx); got != None {
		t.Errorf("Probe of no node = %q, want none", got)
	}
	if got := Probe(ctx, "skewproof-no-such-node-container"); got != None {
		t.Errorf("Probe of a node that is no container = %q, want none", got)
	}
}
