package agent

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func objectsByKind(t *testing.T, o DeployOptions) map[string][]Object {
	t.Helper()
	objs, err := Objects(o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]Object{}
	for _, ob := range objs {
		if ob.Resource.Resource == "" {
			t.Errorf("%s %s: no resource", ob.Object.GetKind(), ob.Object.GetName())
		}
		out[ob.Object.GetKind()] = append(out[ob.Object.GetKind()], ob)
	}
	return out
}

func TestDaemonSetLeastPrivilege(t *testing.T) {
	by := objectsByKind(t, DeployOptions{Image: "skewproof.local/skewproof-agent:x"})
	var ds appsv1.DaemonSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(by["DaemonSet"][0].Object.Object, &ds); err != nil {
		t.Fatal(err)
	}
	ps := ds.Spec.Template.Spec
	if ps.HostNetwork || ps.HostPID || ps.HostIPC {
		t.Error("no host namespaces")
	}
	var hostPaths []string
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			hostPaths = append(hostPaths, v.HostPath.Path)
		}
	}
	if len(hostPaths) != 1 || hostPaths[0] != "/var/lib/kubelet/seccomp" {
		t.Errorf("hostPaths %v, want only the seccomp root", hostPaths)
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if c.ImagePullPolicy != corev1.PullNever || c.Image != "skewproof.local/skewproof-agent:x" {
		t.Errorf("image %s pull %s", c.Image, c.ImagePullPolicy)
	}
	if sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || len(sc.Capabilities.Add) > 0 ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("security context %+v", sc)
	}
	if c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" || !strings.Contains(strings.Join(c.Args, " "), "--node=$(NODE_NAME)") {
		t.Error("node name must come from the downward API")
	}
}

func TestRBACIsNamespacedAndNarrow(t *testing.T) {
	by := objectsByKind(t, DeployOptions{Image: "i", Namespace: "ns"})
	for _, r := range by["Role"] {
		if r.Object.GetNamespace() != "ns" {
			t.Errorf("role %s in %q", r.Object.GetName(), r.Object.GetNamespace())
		}
		var role rbacv1.Role
		runtime.DefaultUnstructuredConverter.FromUnstructured(r.Object.Object, &role)
		for _, rule := range role.Rules {
			for _, v := range append(rule.Verbs, rule.Resources...) {
				if v == "*" {
					t.Errorf("role %s: wildcard", role.Name)
				}
			}
			for _, res := range rule.Resources {
				if (res == "seccompprofiles" || res == "apparmorprofiles") && strings.Contains(strings.Join(rule.Verbs, ","), "update") {
					t.Errorf("role %s may change profiles", role.Name)
				}
			}
		}
	}
	if len(by["ClusterRole"]) != 1 {
		t.Fatalf("cluster roles: %d", len(by["ClusterRole"]))
	}
	var cr rbacv1.ClusterRole
	runtime.DefaultUnstructuredConverter.FromUnstructured(by["ClusterRole"][0].Object.Object, &cr)
	if len(cr.Rules) != 1 || cr.Rules[0].Resources[0] != "nodes" || strings.Join(cr.Rules[0].Verbs, ",") != "list,watch" {
		t.Errorf("cluster role %+v: only list/watch nodes", cr.Rules)
	}
	if len(by["ValidatingAdmissionPolicy"]) != 0 {
		t.Error("the own-node policy is optional")
	}
	with := objectsByKind(t, DeployOptions{Image: "i", Namespace: "ns", OwnNodePolicy: true})
	if len(with["ValidatingAdmissionPolicy"]) != 1 || len(with["ValidatingAdmissionPolicyBinding"]) != 1 {
		t.Error("own-node policy and binding missing")
	}
	if _, err := Objects(DeployOptions{}); err == nil {
		t.Error("no image must be an error")
	}
}
