package nodeaccess

import (
	"context"
	"testing"
)

func TestProbe(t *testing.T) {
	ctx := context.Background()
	if got := Summary(Probe(ctx)); got != None {
		t.Errorf("Probe of no node = %q, want none", got)
	}
	if got := Probe(ctx, "skewproof-no-such-node-container"); got["skewproof-no-such-node-container"] != None {
		t.Errorf("Probe of a node that is no container = %q, want none", got)
	}
}

// One node without Docker access (a User-Mode Linux node) does not take
// it away from the others: the summary says so, the map keeps each.
func TestSummary(t *testing.T) {
	for _, c := range []struct {
		m    map[string]Access
		want Access
	}{
		{nil, None},
		{map[string]Access{"a": Docker, "b": Docker}, Docker},
		{map[string]Access{"a": Docker, "uml": None}, Mixed},
		{map[string]Access{"uml": None}, None},
	} {
		if got := Summary(c.m); got != c.want {
			t.Errorf("Summary(%v) = %s, want %s", c.m, got, c.want)
		}
	}
}
