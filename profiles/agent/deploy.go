package agent

import (
	"fmt"
	"path"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skewproof/skewproof/profiles/api"
)

// Names of the deployed objects.
const (
	DefaultNamespace = "skewproof-profiles"
	AgentName        = "skewproof-agent"
	AggregatorName   = "skewproof-aggregator"
	// BinaryInImage is where the skewproof binary lives in the agent image.
	BinaryInImage = "/usr/local/bin/skewproof"
	// ReadyFile is written by the agent after its first full sync (readiness probe).
	ReadyFile = "/tmp/ready"
	// SeccompMount is where the node's seccomp root is mounted in the agent.
	SeccompMount = "/host/seccomp"
	// SecurityFS is the node's securityfs, mounted at the same path in the
	// agent (apparmor_parser loads through <securityfs>/apparmor).
	SecurityFS = "/sys/kernel/security"
	// StaticPodMount is where the node's static pod directory is mounted in
	// the agent.
	StaticPodMount = "/host/static-pods"
	// DefaultStaticPodPath is kubeadm's staticPodPath (kind's too).
	DefaultStaticPodPath = "/etc/kubernetes/manifests"
)

// DeployOptions describe one deployment of the agent.
type DeployOptions struct {
	Namespace string // DefaultNamespace when empty
	Image     string // image reference: loaded into every node, or pulled from a registry (IfNotPresent)
	// KubeletRoot is the kubelet --root-dir (default /var/lib/kubelet).
	KubeletRoot string
	// OwnNodePolicy adds a ValidatingAdmissionPolicy that lets the agent's
	// service account write the status objects of its own node only (it
	// needs the node-name claim of bound service account tokens, 1.32+).
	OwnNodePolicy bool
	// SeccompOnly leaves out what loading AppArmor profiles needs (the
	// node's securityfs, CAP_MAC_ADMIN, running unconfined by AppArmor);
	// AppArmorProfiles then fail on nodes that have AppArmor.
	SeccompOnly bool
	// AppArmorAnnotation asks for the agent's AppArmor profile (unconfined)
	// with the beta annotation instead of the securityContext field, for
	// API servers older than 1.30.
	AppArmorAnnotation bool
	// StaticPodPath is the kubelets' staticPodPath on the nodes
	// (DefaultStaticPodPath when empty), mounted into the agent so that it
	// writes the manifests of StaticPods there.
	StaticPodPath string
	// NoStaticPods leaves the static pod directory out: StaticPods then
	// fail on every node, saying so.
	NoStaticPods bool
	// ExcludeNodes are nodes the agent must not run on: nodes the run
	// cannot test (not Ready), where its pod would never become ready.
	ExcludeNodes []string
}

func (o DeployOptions) withDefaults() DeployOptions {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.KubeletRoot == "" {
		o.KubeletRoot = "/var/lib/kubelet"
	}
	if o.StaticPodPath == "" {
		o.StaticPodPath = DefaultStaticPodPath
	}
	return o
}

// Object is one object to apply, with its resource.
type Object struct {
	Resource schema.GroupVersionResource
	Object   *unstructured.Unstructured
}

// Namespaced reports whether the object lives in a namespace.
func (o Object) Namespaced() bool { return o.Object.GetNamespace() != "" }

// Objects returns what the agent needs, in apply order: the namespace,
// service accounts and RBAC, the admission policy (optional), the agent
// DaemonSet and the aggregator Deployment. CRDs are separate (api.CRDs).
// excludeNodes keeps a DaemonSet's pods off the nodes named (by
// metadata.name, as the DaemonSet controller itself places them); nil when
// there are none.
func excludeNodes(nodes []string) *corev1.Affinity {
	if len(nodes) == 0 {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: slices.Sorted(slices.Values(nodes))}}}}}}}
}

// aggregatorArgs are the aggregator's arguments: the nodes left out of the
// agent are not expected to report either.
func aggregatorArgs(exclude []string) []string {
	args := []string{"--namespace=$(NAMESPACE)"}
	if len(exclude) > 0 {
		args = append(args, "--exclude-nodes="+strings.Join(slices.Sorted(slices.Values(exclude)), ","))
	}
	return args
}

func Objects(o DeployOptions) ([]Object, error) {
	o = o.withDefaults()
	if o.Image == "" {
		return nil, fmt.Errorf("no agent image")
	}
	labels := map[string]string{"app.kubernetes.io/part-of": "skewproof"}
	meta := func(name string, ns bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": name}}
		if ns {
			m.Namespace = o.Namespace
		}
		return m
	}
	clusterName := func(name string) string { return name + "-" + o.Namespace }
	profileRes := []string{api.SeccompProfiles.Resource, api.AppArmorProfiles.Resource}
	read := []string{"get", "list", "watch"}
	var objs []runtime.Object
	objs = append(objs,
		&corev1.Namespace{TypeMeta: tm("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{
			"app.kubernetes.io/part-of": "skewproof",
			// The agent mounts hostPaths (the seccomp root, securityfs) and
			// adds CAP_MAC_ADMIN, which the baseline Pod Security level forbids.
			"pod-security.kubernetes.io/enforce": "privileged",
		}}},
		&corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(AgentName, true)},
		&corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(AggregatorName, true)},
		// The agent reads profiles and static pods, writes node statuses
		// and events.
		&rbacv1.Role{TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(AgentName, true), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{api.Group}, Resources: append(profileRes, api.StaticPods.Resource), Verbs: read},
			{APIGroups: []string{api.Group}, Resources: []string{api.ProfileNodeStatuses.Resource}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}},
		}},
		binding("RoleBinding", meta(AgentName, true), "Role", AgentName, AgentName, o.Namespace),
		// The aggregator reads profiles and node statuses, writes the
		// profiles' status subresource, and lists nodes (the expected set).
		&rbacv1.Role{TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(AggregatorName, true), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{api.Group}, Resources: append(profileRes, api.ProfileNodeStatuses.Resource), Verbs: read},
			{APIGroups: []string{api.Group}, Resources: []string{api.SeccompProfiles.Resource + "/status", api.AppArmorProfiles.Resource + "/status"}, Verbs: []string{"update"}},
		}},
		binding("RoleBinding", meta(AggregatorName, true), "Role", AggregatorName, AggregatorName, o.Namespace),
		&rbacv1.ClusterRole{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(clusterName(AggregatorName), false), Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
		}},
		binding("ClusterRoleBinding", meta(clusterName(AggregatorName), false), "ClusterRole", clusterName(AggregatorName), AggregatorName, o.Namespace),
	)
	if o.OwnNodePolicy {
		objs = append(objs, ownNodePolicy(o, clusterName(AgentName+"-own-node"))...)
	}
	objs = append(objs, daemonSet(o, labels), aggregator(o))
	out := make([]Object, 0, len(objs))
	for _, obj := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		out = append(out, Object{Resource: resourceOf(u), Object: u})
	}
	return out, nil
}

func resourceOf(u *unstructured.Unstructured) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	plural := map[string]string{
		"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "Role": "roles", "RoleBinding": "rolebindings",
		"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings", "DaemonSet": "daemonsets",
		"Deployment": "deployments", "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
		"ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
	}[u.GetKind()]
	return gv.WithResource(plural)
}

func tm(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func binding(kind string, m metav1.ObjectMeta, roleKind, role, sa, ns string) runtime.Object {
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: roleKind, Name: role}
	subj := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}
	if kind == "ClusterRoleBinding" {
		return &rbacv1.ClusterRoleBinding{TypeMeta: tm("rbac.authorization.k8s.io/v1", kind), ObjectMeta: m, RoleRef: ref, Subjects: subj}
	}
	return &rbacv1.RoleBinding{TypeMeta: tm("rbac.authorization.k8s.io/v1", kind), ObjectMeta: m, RoleRef: ref, Subjects: subj}
}

// ownNodePolicy denies the agent's writes to another node's status: RBAC
// cannot scope a verb to one node, a CEL admission policy can, from the
// node name bound into the agent pod's service account token.
func ownNodePolicy(o DeployOptions, name string) []runtime.Object {
	fail := admissionv1.Fail
	user := fmt.Sprintf("system:serviceaccount:%s:%s", o.Namespace, AgentName)
	return []runtime.Object{
		&admissionv1.ValidatingAdmissionPolicy{
			TypeMeta:   tm("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof"}},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: &fail,
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
						Rule: admissionv1.Rule{APIGroups: []string{api.Group}, APIVersions: []string{api.Version},
							Resources: []string{api.ProfileNodeStatuses.Resource}},
					},
				}}},
				MatchConditions: []admissionv1.MatchCondition{{Name: "agent", Expression: fmt.Sprintf("request.userInfo.username == %q", user)}},
				Validations: []admissionv1.Validation{{
					Expression: "'authentication.kubernetes.io/node-name' in request.userInfo.extra && " +
						"(object != null ? object.nodeName : oldObject.nodeName) == request.userInfo.extra['authentication.kubernetes.io/node-name'][0]",
					Message: "the skewproof agent may write the profile statuses of its own node only",
				}},
			},
		},
		&admissionv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   tm("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof"}},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        name,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: o.Namespace}}},
			},
		},
	}
}

func restricted(uid int64) *corev1.SecurityContext {
	f := false
	return &corev1.SecurityContext{
		RunAsUser:                &uid,
		RunAsNonRoot:             ptr(uid != 0),
		AllowPrivilegeEscalation: &f,
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func resources(cpu, mem, memLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memLimit)},
	}
}

func daemonSet(o DeployOptions, _ map[string]string) *appsv1.DaemonSet {
	sel := map[string]string{"app.kubernetes.io/name": AgentName}
	hostPathType := corev1.HostPathDirectoryOrCreate
	// Root for the root-owned seccomp root, but without CAP_DAC_OVERRIDE, so
	// file modes hold.
	sc := restricted(0)
	args := []string{"--node=$(NODE_NAME)", "--namespace=$(NAMESPACE)", "--seccomp-root=" + SeccompMount}
	mounts := []corev1.VolumeMount{
		{Name: "seccomp-root", MountPath: SeccompMount},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{
		{Name: "seccomp-root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: path.Join(o.KubeletRoot, "seccomp"), Type: &hostPathType}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if !o.NoStaticPods {
		// The manifests of StaticPods: the agent writes only files of its
		// namespace's prefix there (api.StaticPodFilePrefix).
		args = append(args, "--static-pod-dir="+StaticPodMount, "--static-pod-path="+o.StaticPodPath)
		mounts = append(mounts, corev1.VolumeMount{Name: "static-pods", MountPath: StaticPodMount})
		volumes = append(volumes, corev1.Volume{Name: "static-pods", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: o.StaticPodPath, Type: &hostPathType}}})
	}
	var podAnnotations map[string]string
	if o.SeccompOnly {
		args = append(args, "--apparmor-load=false")
	} else {
		// Loading an AppArmor profile is a write to <securityfs>/apparmor
		// (.replace, .remove), which the kernel allows to a task with
		// CAP_MAC_ADMIN (uid 0 owns those files, so no CAP_DAC_OVERRIDE),
		// and which the container runtime's default AppArmor profile denies
		// (deny /sys/kernel/security/** rwklx): the agent runs unconfined
		// by AppArmor. Nothing else changes: no privilege escalation,
		// RuntimeDefault seccomp, read-only root file system.
		sc.Capabilities.Add = []corev1.Capability{"MAC_ADMIN"}
		if o.AppArmorAnnotation {
			podAnnotations = map[string]string{corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "agent": corev1.DeprecatedAppArmorBetaProfileNameUnconfined}
		} else {
			sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}
		securityFSType := corev1.HostPathDirectory
		mounts = append(mounts, corev1.VolumeMount{Name: "securityfs", MountPath: SecurityFS})
		volumes = append(volumes, corev1.Volume{Name: "securityfs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: SecurityFS, Type: &securityFSType}}})
	}
	return &appsv1.DaemonSet{
		TypeMeta:   tm("apps/v1", "DaemonSet"),
		ObjectMeta: metav1.ObjectMeta{Name: AgentName, Namespace: o.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": AgentName}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptrIntOrString("100%")}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": AgentName},
					Annotations: podAnnotations},
				Spec: corev1.PodSpec{
					ServiceAccountName: AgentName,
					// Every node, control plane included.
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					NodeSelector:                  map[string]string{corev1.LabelOSStable: "linux"},
					Affinity:                      excludeNodes(o.ExcludeNodes),
					TerminationGracePeriodSeconds: ptr(int64(5)),
					Containers: []corev1.Container{{
						Name:            "agent",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{BinaryInImage, "agent"},
						Args:            args,
						Env: []corev1.EnvVar{
							{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
							{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
						},
						SecurityContext: sc,
						Resources:       resources("5m", "16Mi", "64Mi"),
						VolumeMounts:    mounts,
						// A startup probe, not a readiness probe: the agent is
						// ready once its first full sync wrote ReadyFile and
						// stays so, and a readiness probe would exec the agent
						// binary every few seconds for as long as the agent
						// runs (with runc's exec, ~35 CPU-seconds per node in a
						// 9-minute run, a sixth of what a worker used). The
						// container is Ready when this succeeds; it is killed
						// and restarted only after 30 minutes without the
						// first sync. The exec can take many seconds on a
						// User-Mode Linux node (one slow CPU).
						StartupProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{BinaryInImage, "agent", "probe"}}},
							PeriodSeconds: 2, TimeoutSeconds: 60, FailureThreshold: 900,
						},
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

func aggregator(o DeployOptions) *appsv1.Deployment {
	sel := map[string]string{"app.kubernetes.io/name": AggregatorName}
	return &appsv1.Deployment{
		TypeMeta:   tm("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: AggregatorName, Namespace: o.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": AggregatorName}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": AggregatorName}},
				Spec: corev1.PodSpec{
					ServiceAccountName:            AggregatorName,
					Tolerations:                   []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					NodeSelector:                  map[string]string{corev1.LabelOSStable: "linux"},
					TerminationGracePeriodSeconds: ptr(int64(5)),
					Containers: []corev1.Container{{
						Name:            "aggregator",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{BinaryInImage, "agent", "aggregate"},
						Args:            aggregatorArgs(o.ExcludeNodes),
						Env: []corev1.EnvVar{{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
						SecurityContext: restricted(65532),
						Resources:       resources("5m", "16Mi", "128Mi"),
					}},
				},
			},
		},
	}
}
