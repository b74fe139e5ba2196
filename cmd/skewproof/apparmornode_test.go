package main

import (
	"reflect"
	"testing"

	"github.com/skewproof/skewproof/clusters"
)

// TestResolveAppArmorNodes: --apparmor-node's words and lists for a
// cluster of workers on hosts with and without AppArmor.
func TestResolveAppArmorNodes(t *testing.T) {
	crio := clusters.NodeRuntime{CRI: "crio", OCI: "crun"}
	workers := []clusters.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2"}, {Kubelet: "1.37.2", Runtime: crio}, {Kubelet: "1.34.4"}}
	each := []clusters.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2"}, {Kubelet: "1.37.2", Runtime: crio}}
	for _, c := range []struct {
		spec   string
		hostAA bool
		want   []clusters.Worker
	}{
		{"auto", false, each}, // the default: every kubelet and runtime once
		{"auto", true, nil},   // the kind nodes enforce AppArmor themselves
		{"all", true, each},
		{"off", false, nil},
		{"", false, nil},
		{"1.37.2", false, []clusters.Worker{{Kubelet: "1.37.2"}}},
		{"v1.34.4, 1.37.2@crio+crun", true, []clusters.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2", Runtime: crio}}},
	} {
		got, err := resolveAppArmorNodes(c.spec, workers, c.hostAA, nil)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("resolveAppArmorNodes(%q, host AppArmor %v) = %v, %v; want %v", c.spec, c.hostAA, got, err, c.want)
		}
	}
	for _, bad := range []string{"1.37.2,all", "off,1.34.4", "1.37.2,1.37.2", "@crio", "1.37.2+nosuch"} {
		if got, err := resolveAppArmorNodes(bad, workers, false, nil); err == nil {
			t.Errorf("resolveAppArmorNodes(%q) = %v, want an error", bad, got)
		}
	}
}
