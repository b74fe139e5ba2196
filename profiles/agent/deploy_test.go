package agent

import (
	"reflect"
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

func agentPod(t *testing.T, o DeployOptions) corev1.PodTemplateSpec {
	t.Helper()
	by := objectsByKind(t, o)
	var ds appsv1.DaemonSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(by["DaemonSet"][0].Object.Object, &ds); err != nil {
		t.Fatal(err)
	}
	return ds.Spec.Template
}

func hostPaths(ps corev1.PodSpec) map[string]string {
	mountOf := map[string]string{}
	for _, m := range ps.Containers[0].VolumeMounts {
		mountOf[m.Name] = m.MountPath
		if m.ReadOnly {
			mountOf[m.Name] += ":ro"
		}
	}
	out := map[string]string{}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			out[v.HostPath.Path] = mountOf[v.Name]
		}
	}
	return out
}

// The agent's privileges: what writing seccomp files, loading AppArmor
// profiles and writing static pod manifests need, nothing more.
func TestDaemonSetLeastPrivilege(t *testing.T) {
	tpl := agentPod(t, DeployOptions{Image: "skewproof.local/skewproof-agent:x"})
	ps := tpl.Spec
	if ps.HostNetwork || ps.HostPID || ps.HostIPC {
		t.Error("no host namespaces")
	}
	if got, want := hostPaths(ps), map[string]string{"/var/lib/kubelet/seccomp": SeccompMount, "/sys/kernel/security": "/sys/kernel/security",
		"/etc/kubernetes/manifests": StaticPodMount}; !reflect.DeepEqual(got, want) {
		t.Errorf("hostPaths %v, want %v (the seccomp root, securityfs and the static pod directory only)", got, want)
	}
	c := ps.Containers[0]
	sc := c.SecurityContext
	if c.ImagePullPolicy != corev1.PullIfNotPresent || c.Image != "skewproof.local/skewproof-agent:x" {
		t.Errorf("image %s pull %s", c.Image, c.ImagePullPolicy)
	}
	if sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("security context %+v", sc)
	}
	if !reflect.DeepEqual(sc.Capabilities.Add, []corev1.Capability{"MAC_ADMIN"}) {
		t.Errorf("capabilities added %v, want exactly MAC_ADMIN (loading AppArmor policy)", sc.Capabilities.Add)
	}
	if sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined || len(tpl.Annotations) != 0 {
		t.Errorf("AppArmor profile %+v, annotations %v: want the field, Unconfined (the runtime's default profile denies securityfs)", sc.AppArmorProfile, tpl.Annotations)
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Error("uid 0 (owner of the seccomp root and of securityfs files)")
	}
	if c.Env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" || !strings.Contains(strings.Join(c.Args, " "), "--node=$(NODE_NAME)") {
		t.Error("node name must come from the downward API")
	}
	if strings.Contains(strings.Join(c.Args, " "), "--apparmor-load") {
		t.Errorf("args %v", c.Args)
	}
	if args := strings.Join(c.Args, " "); !strings.Contains(args, "--static-pod-dir="+StaticPodMount) || !strings.Contains(args, "--static-pod-path=/etc/kubernetes/manifests") {
		t.Errorf("args %v: the static pod directory, as mounted and on the node", c.Args)
	}
}

func TestDaemonSetStaticPodPath(t *testing.T) {
	ps := agentPod(t, DeployOptions{Image: "i", StaticPodPath: "/etc/kubelet.d"}).Spec
	if hostPaths(ps)["/etc/kubelet.d"] != StaticPodMount || !strings.Contains(strings.Join(ps.Containers[0].Args, " "), "--static-pod-path=/etc/kubelet.d") {
		t.Errorf("hostPaths %v args %v", hostPaths(ps), ps.Containers[0].Args)
	}
	ps = agentPod(t, DeployOptions{Image: "i", NoStaticPods: true}).Spec
	if _, ok := hostPaths(ps)["/etc/kubernetes/manifests"]; ok || strings.Contains(strings.Join(ps.Containers[0].Args, " "), "--static-pod") {
		t.Errorf("without static pods: hostPaths %v args %v", hostPaths(ps), ps.Containers[0].Args)
	}
}

func TestDaemonSetSeccompOnly(t *testing.T) {
	tpl := agentPod(t, DeployOptions{Image: "i", SeccompOnly: true})
	ps := tpl.Spec
	if got, want := hostPaths(ps), map[string]string{"/var/lib/kubelet/seccomp": SeccompMount, "/etc/kubernetes/manifests": StaticPodMount}; !reflect.DeepEqual(got, want) {
		t.Errorf("hostPaths %v, want only the seccomp root and the static pod directory", got)
	}
	sc := ps.Containers[0].SecurityContext
	if len(sc.Capabilities.Add) > 0 || sc.AppArmorProfile != nil || len(tpl.Annotations) != 0 {
		t.Errorf("seccomp only: no capability, default AppArmor confinement; got %+v %v", sc, tpl.Annotations)
	}
	if !strings.Contains(strings.Join(ps.Containers[0].Args, " "), "--apparmor-load=false") {
		t.Errorf("args %v", ps.Containers[0].Args)
	}
}

func TestDaemonSetAppArmorAnnotationForOldAPIServers(t *testing.T) {
	tpl := agentPod(t, DeployOptions{Image: "i", AppArmorAnnotation: true})
	sc := tpl.Spec.Containers[0].SecurityContext
	if sc.AppArmorProfile != nil || tpl.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+"agent"] != "unconfined" {
		t.Errorf("field %+v, annotations %v", sc.AppArmorProfile, tpl.Annotations)
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
				if (res == "seccompprofiles" || res == "apparmorprofiles" || res == "staticpods") && strings.Contains(strings.Join(rule.Verbs, ","), "update") {
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

// The agent's readiness comes from a startup probe only: a readiness or
// liveness probe would exec the agent binary every few seconds for as long
// as the agent runs, a sixth of a worker's CPU in a conformance run.
func TestDaemonSetProbesOnlyAtStartup(t *testing.T) {
	c := agentPod(t, DeployOptions{Image: "i"}).Spec.Containers[0]
	if c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("periodic probes: readiness %+v, liveness %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	p := c.StartupProbe
	if p == nil || p.Exec == nil || strings.Join(p.Exec.Command, " ") != BinaryInImage+" agent probe" {
		t.Fatalf("startup probe %+v: want an exec of '%s agent probe'", p, BinaryInImage)
	}
	if window := p.PeriodSeconds * p.FailureThreshold; window < 30*60 {
		t.Errorf("the agent is restarted after %d s without its first sync; allow 30 minutes (User-Mode Linux nodes are slow)", window)
	}
}

// Nodes the run cannot test get no agent pod (it would never be ready
// there); without any, the pod goes everywhere.
func TestDaemonSetExcludesNodes(t *testing.T) {
	if a := agentPod(t, DeployOptions{Image: "i"}).Spec.Affinity; a != nil {
		t.Errorf("affinity without excluded nodes: %+v", a)
	}
	a := agentPod(t, DeployOptions{Image: "i", ExcludeNodes: []string{"w2", "w1"}}).Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatalf("no required node affinity: %+v", a)
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	want := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"w1", "w2"}}
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || !reflect.DeepEqual(terms[0].MatchFields[0], want) {
		t.Errorf("terms %+v, want %+v", terms, want)
	}
	// The aggregator does not expect them to report either.
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objectsByKind(t, DeployOptions{Image: "i", ExcludeNodes: []string{"w2", "w1"}})["Deployment"][0].Object.Object, &dep); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--exclude-nodes=w1,w2") {
		t.Errorf("aggregator args %q", args)
	}
}
