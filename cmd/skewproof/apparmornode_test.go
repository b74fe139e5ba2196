package main

import (
	"reflect"
	"testing"

	"github.com/skewproof/skewproof/clusters/noderuntime"
)

// TestResolveAppArmorNodes: --apparmor-node's words and lists for a
// cluster of workers on hosts with and without AppArmor.
func TestResolveAppArmorNodes(t *testing.T) {
	crio := noderuntime.Runtime{CRI: "crio", OCI: "crun"}
	workers := []noderuntime.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2"}, {Kubelet: "1.37.2", Runtime: crio}, {Kubelet: "1.34.4"}}
	each := []noderuntime.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2"}, {Kubelet: "1.37.2", Runtime: crio}}
	for _, c := range []struct {
		spec string
		auto bool
		want []noderuntime.Worker
	}{
		{"auto", true, each}, // the default on a host without AppArmor: every kubelet and runtime once
		{"auto", false, nil}, // the kind nodes enforce AppArmor themselves, or no AppArmor suite
		{"all", false, each},
		{"off", true, nil},
		{"", true, nil},
		{"1.37.2", true, []noderuntime.Worker{{Kubelet: "1.37.2"}}},
		{"v1.34.4, 1.37.2@crio+crun", false, []noderuntime.Worker{{Kubelet: "1.34.4"}, {Kubelet: "1.37.2", Runtime: crio}}},
	} {
		got, err := resolveAppArmorNodes(c.spec, workers, c.auto, nil)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("resolveAppArmorNodes(%q, auto adds %v) = %v, %v; want %v", c.spec, c.auto, got, err, c.want)
		}
	}
	// auto adds them for a run of the AppArmor suite on a host without
	// AppArmor, never for a run without it.
	if autoAddsAppArmorNodes([]string{"seccomp", "profiles"}) {
		t.Errorf("auto adds AppArmor nodes to a run without the AppArmor suite")
	}
	for _, bad := range []string{"1.37.2,all", "off,1.34.4", "1.37.2,1.37.2", "@crio", "1.37.2+nosuch"} {
		if got, err := resolveAppArmorNodes(bad, workers, false, nil); err == nil {
			t.Errorf("resolveAppArmorNodes(%q) = %v, want an error", bad, got)
		}
	}
}
