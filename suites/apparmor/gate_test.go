package apparmor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

// The AppArmor gate's state is never guessed: where the API server does not
// say it, the rules are not judged.
func TestGateFrom(t *testing.T) {
	for _, c := range []struct {
		name, enabled string
		err           error
		want          gateState
		unknown       string
	}{
		{name: "on", enabled: "1", want: gateState{enabled: "1"}},
		{name: "off", enabled: "0", want: gateState{enabled: "0"}},
		// Before, a /metrics the run could not read left the rules
		// skipped also on skewproof's own cluster, and a gate missing
		// from the metric counted as enabled.
		{name: "metrics unreadable", err: errors.New("reading the API server's /metrics: forbidden"), unknown: "forbidden"},
		{name: "gate not in the metric", unknown: `no kubernetes_feature_enabled{name="AppArmor"}`},
	} {
		got := gateFrom("AppArmor", c.enabled, c.err)
		if got.release {
			t.Errorf("%s: an API server that reports its gates counts as a fact of the release: %+v", c.name, got)
		}
		if c.unknown == "" && got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if c.unknown != "" && (got.enabled != "" || !strings.Contains(got.unknown, c.unknown)) {
			t.Errorf("%s: %+v, want unknown holding %q", c.name, got, c.unknown)
		}
	}
}

// Before v1.26 the API server reports no gates: a fact of the release,
// asked of no API server.
func TestReadGateBeforeTheMetric(t *testing.T) {
	v, err := release.ParseVersion("1.25.16")
	if err != nil {
		t.Fatal(err)
	}
	got := readGate(context.Background(), nil, v, "AppArmor")
	if !got.release || got.enabled != "" || !strings.Contains(got.unknown, "from v1.26") {
		t.Errorf("readGate at v1.25.16 = %+v", got)
	}
}
