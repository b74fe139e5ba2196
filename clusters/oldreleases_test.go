package clusters

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The kubeadm patches follow the control plane's release: skipPhases and
// patches from v1.23 (kind's v1beta3), the kubelet's systemd cgroup driver
// before v1.24 (kind writes cgroupfs), failCgroupV1 from v1.31 on a cgroup
// v1 host only.
func TestKubeadmPatchesByRelease(t *testing.T) {
	kubelet := func(ps []string) string {
		for _, p := range ps {
			if strings.Contains(p, "kind: KubeletConfiguration") {
				return p
			}
		}
		return ""
	}
	for _, c := range []struct {
		cp           string
		cgroup       int
		skipPhases   bool
		cgroupDriver bool
		failCgroupV1 bool
	}{
		{"1.19.16", 1, false, true, false},
		{"1.22.17", 1, false, true, false},
		{"1.23.17", 1, true, true, false},
		{"v1.24.17", 1, true, false, false},
		{"1.30.14", 1, true, false, false},
		{"1.31.14", 1, true, false, true},
		{"1.37.2", 1, true, false, true},
		{"1.37.2", 2, true, false, false},
		{"1.19.16", 2, false, true, false},
	} {
		ps, mount, err := kubeadmPatches(c.cp, c.cgroup, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.cp, err)
		}
		if !slices.Contains(ps, controllerManagerPatch) {
			t.Errorf("%s: no controller-manager patch", c.cp)
		}
		if got := slices.Contains(ps, noCoreDNSPatch) && slices.Contains(ps, kubeadmPatchesConfig); got != c.skipPhases || mount != c.skipPhases {
			t.Errorf("%s: skipPhases/patches %v, mounted %v; want %v", c.cp, got, mount, c.skipPhases)
		}
		kl := kubelet(ps)
		if got := strings.Contains(kl, "cgroupDriver: systemd"); got != c.cgroupDriver {
			t.Errorf("%s cgroup v%d: cgroupDriver: systemd %v, want %v (%q)", c.cp, c.cgroup, got, c.cgroupDriver, kl)
		}
		if got := strings.Contains(kl, "failCgroupV1: false"); got != c.failCgroupV1 {
			t.Errorf("%s cgroup v%d: failCgroupV1 %v, want %v (%q)", c.cp, c.cgroup, got, c.failCgroupV1, kl)
		}
		keep, err := keepsCoreDNS(c.cp)
		if err != nil || keep == c.skipPhases {
			t.Errorf("%s: keepsCoreDNS %v, %v", c.cp, keep, err)
		}
	}
	if _, _, err := kubeadmPatches("latest", 1, nil); err == nil {
		t.Error("a malformed version is accepted")
	}
}

// Before v1.20 kube-controller-manager gets BoundServiceAccountTokenVolume
// (the kube-root-ca.crt publisher) with the cluster's own gates; from v1.20
// nothing.
func TestRootCAPublisherPatch(t *testing.T) {
	has := func(cp string, gates map[string]bool) string {
		ps, _, err := kubeadmPatches(cp, 1, gates)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if strings.Contains(p, "feature-gates") {
				return p
			}
		}
		return ""
	}
	if p := has("1.19.16", map[string]bool{"AppArmor": false}); !strings.Contains(p, `feature-gates: "AppArmor=false,BoundServiceAccountTokenVolume=true"`) || !strings.Contains(p, "controllerManager:") {
		t.Errorf("v1.19 patch: %q", p)
	}
	if p := has("1.19.16", nil); !strings.Contains(p, `"BoundServiceAccountTokenVolume=true"`) {
		t.Errorf("v1.19 patch without gates: %q", p)
	}
	if p := has("1.20.15", nil); p != "" {
		t.Errorf("v1.20 patch: %q", p)
	}
}

// The publisher's service account is bound to a role that lets it create
// and update ConfigMaps, as v1.20's bootstrap policy has it; granting twice
// is no error. Only control planes before v1.20 need it.
func TestGrantRootCAPublisher(t *testing.T) {
	cs := fake.NewSimpleClientset()
	ctx := context.Background()
	for range 2 {
		if err := grantRootCAPublisher(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	b, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "system:controller:root-ca-cert-publisher", metav1.GetOptions{})
	if err != nil || b.Subjects[0].Name != "root-ca-cert-publisher" || b.Subjects[0].Namespace != "kube-system" || b.RoleRef.Name != b.Name {
		t.Fatalf("binding %+v, %v", b, err)
	}
	r, err := cs.RbacV1().ClusterRoles().Get(ctx, b.RoleRef.Name, metav1.GetOptions{})
	if err != nil || !slices.Contains(r.Rules[0].Resources, "configmaps") || !slices.Contains(r.Rules[0].Verbs, "create") {
		t.Fatalf("role %+v, %v", r, err)
	}
	for cp, want := range map[string]bool{"1.19.16": true, "1.20.15": false, "1.37.2": false} {
		if got, err := needsRootCAPublisher(cp); err != nil || got != want {
			t.Errorf("needsRootCAPublisher(%s) = %v, %v", cp, got, err)
		}
	}
}
