package skew

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// gateLife is the lifecycle of a feature gate the KEPs name: from which
// minor it is locked to its default (true), and in which it is removed.
type gateLife struct{ locked, removed release.Minor }

// knownGates, read from pkg/features/kube_features.go and
// versioned_kube_features.go of k8s.io/kubernetes v1.30.14…v1.33.13:
// AppArmor and AppArmorFields are GA with LockToDefault from v1.31 and
// gone in v1.33.
var knownGates = map[string]gateLife{
	"AppArmor":       {locked: release.Minor{Major: 1, Minor: 31}, removed: release.Minor{Major: 1, Minor: 33}},
	"AppArmorFields": {locked: release.Minor{Major: 1, Minor: 31}, removed: release.Minor{Major: 1, Minor: 33}},
}

// FeatureMetricSince is the first minor whose kube-apiserver reports its
// feature gates in /metrics (kubernetes_feature_enabled{name,stage}):
// cmd/kube-apiserver/app/server.go of k8s.io/kubernetes v1.26.15 calls
// utilfeature.DefaultMutableFeatureGate.AddMetrics(), v1.25.16 has no such
// call and k8s.io/component-base v0.25.16 no such metric. Before it an API
// server does not say whether a gate is enabled.
var FeatureMetricSince = release.Minor{Major: 1, Minor: 26}

// CheckFeatureGate says whether a component at version v accepts gate=value
// (a gate it does not know, or a locked gate set against its default, stops
// it from starting). Gates the KEPs do not name are not checked.
func CheckFeatureGate(gate string, value bool, v *version.Version) error {
	l, ok := knownGates[gate]
	if !ok {
		return nil
	}
	m := release.MinorOf(v)
	switch {
	case !m.Less(l.removed):
		return fmt.Errorf("feature gate %s no longer exists in v%s (removed in v%s); use a version before v%s", gate, v, l.removed, l.removed)
	case !m.Less(l.locked) && !value:
		return fmt.Errorf("feature gate %s is locked to true in v%s (from v%s); it can be disabled only before v%s", gate, v, l.locked, l.locked)
	}
	return nil
}

// ParseFeatureGates adds the gates of a list Name=true|false,… (the form
// --feature-gates takes) to gates.
func ParseFeatureGates(s string, gates map[string]bool) error {
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		b, err := strconv.ParseBool(v)
		if !ok || k == "" || err != nil || strings.ContainsAny(k, " /.") {
			return fmt.Errorf("want Name=true|false, got %q", kv)
		}
		gates[k] = b
	}
	return nil
}
