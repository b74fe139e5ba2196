package runner

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/skewproof/skewproof/internal/nodefacts"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

// Names of the RBAC objects of 'skewproof rbac'.
const (
	// ClusterRoleName is the ClusterRole (and ClusterRoleBinding) that holds
	// what a run against an existing cluster needs.
	ClusterRoleName = "skewproof-runner"
	// DefaultServiceAccount and DefaultServiceAccountNamespace are the
	// ServiceAccount the ClusterRole is bound to unless told otherwise.
	DefaultServiceAccount          = "skewproof-runner"
	DefaultServiceAccountNamespace = "default"
)

// ProfilesSuiteNamespace is where the profiles suite deploys its own node
// agent (suites/profiles.Namespace; a test keeps the two equal: the runner
// does not link the suites).
const ProfilesSuiteNamespace = "skewproof-profiles-e2e"

// Rule is one rule of the ClusterRole and the part of a run that needs it.
type Rule struct {
	rbacv1.PolicyRule
	Why string
}

// Rules are the rules of the ClusterRole a run against an existing cluster
// needs ('skewproof run --kubeconfig' with the seccomp, apparmor and
// profiles suites). No rule has a wildcard. See ExplainedRules for why
// each is there.
func Rules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range ExplainedRules() {
		out = append(out, r.PolicyRule)
	}
	return out
}

// agentNamespaces are the namespaces a run deploys the node agent into:
// the runner's fixtures agent and the profiles suite's own.
func agentNamespaces() []string {
	return []string{profiles.FixturesNamespace, ProfilesSuiteNamespace}
}

// agentObjectNames maps each resource of the node agent's deployment
// (agent.Objects, with the admission policy) to the names it has in the
// agent namespaces of a run, sorted.
func agentObjectNames() map[string][]string {
	seen := map[string]map[string]bool{}
	for _, ns := range agentNamespaces() {
		objs, err := agent.Objects(agent.DeployOptions{Namespace: ns, Image: "unused", OwnNodePolicy: true})
		if err != nil {
			panic(err) // only for an empty image
		}
		for _, o := range objs {
			r := o.Resource.Resource
			if seen[r] == nil {
				seen[r] = map[string]bool{}
			}
			seen[r][o.Object.GetName()] = true
		}
	}
	out := map[string][]string{}
	for r, names := range seen {
		for n := range names {
			out[r] = append(out[r], n)
		}
		sort.Strings(out[r])
	}
	return out
}

// crdNames are the names of the profile API's CRDs.
func crdNames() []string {
	crds, err := api.CRDs()
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []string
	for _, c := range crds {
		out = append(out, c.GetName())
	}
	sort.Strings(out)
	return out
}

// ExplainedRules are Rules with the part of the run that needs each.
//
// The run creates Roles, RoleBindings, a ClusterRole and a
// ClusterRoleBinding for the node agent and its aggregator
// (profiles/agent.Objects). Kubernetes lets a subject create a role only
// with permissions it holds itself, or with the escalate verb on roles, and
// bind a role only when it holds that role's permissions, or with the bind
// verb. The runner holds every permission it grants the agent (a few
// verbs below are there for that reason alone, and say so) and has neither
// escalate nor bind: escalate and bind together let a subject grant itself
// anything, whereas holding the agent's small set of permissions grants
// nothing beyond them.
//
// Objects whose names are known in advance (the agent's deployment in its
// two namespaces, the CRDs, the RuntimeClasses) are written by name
// (resourceNames). Server-side apply of a new object is authorized as
// patch and as create with the object's name, so create by name suffices
// there; the objects the suites make under generated names (namespaces,
// pods, workloads, profiles) need create on the whole resource.
func ExplainedRules() []Rule {
	objs := agentObjectNames()
	names := func(resources ...string) []string { return union(objs, resources...) }
	return []Rule{
		// Core API.
		{rule([]string{""}, []string{"nodes"}, nil, "get", "list", "watch"),
			"the runner and the suites list the nodes (kubelet versions, workers); apparmor/node/ready-message reads its node; " +
				"watch only because the aggregator's ClusterRole grants list and watch on nodes"},
		{rule([]string{""}, []string{"nodes/proxy"}, nil, "get"),
			"apparmor/static-pod/annotation-copy: the kubelet's /configz (staticPodPath) and /pods (the static pod as the kubelet sees it) through the API server's node proxy"},
		{rule([]string{""}, []string{"namespaces"}, nil, "create", "get", "list", "update", "delete"),
			"a namespace per spec (the e2e framework creates it, lists namespaces while waiting for its deletion, deletes it), " +
				"the namespace of profiles/node-status/scale, the Pod Security labels apparmor/psa sets (update), " +
				"the runner's removal of leftover namespaces (list, delete) and of the agent's namespaces (delete, get); names are generated"},
		{rule([]string{""}, []string{"namespaces"}, names("namespaces"), "patch"),
			"server-side apply of the node agent's namespaces"},
		{rule([]string{""}, []string{"serviceaccounts"}, nil, "list", "watch"),
			"the e2e framework waits for the default service account of each spec's namespace " +
				"(a watch; list where the API server does not stream the initial list)"},
		{rule([]string{""}, []string{"serviceaccounts"}, names("serviceaccounts"), "create", "patch"),
			"server-side apply of the node agent's and the aggregator's service accounts"},
		{rule([]string{""}, []string{"serviceaccounts/token"}, []string{agent.AgentName}, "create"),
			"profiles/agent/own-node asks a token bound to an agent pod, to act as that agent"},
		{rule([]string{""}, []string{"configmaps"}, nil, "list", "watch"),
			"the e2e framework waits for kube-root-ca.crt in each spec's namespace (a watch; list as for serviceaccounts)"},
		{rule([]string{""}, []string{"pods"}, nil, "create", "get", "list", "update", "delete"),
			"the specs' pods: create, read the stored pod and its status, update (the update rules), delete (failure rows); " +
				"list: the agent pods and the pods of a ReplicaSet"},
		{rule([]string{""}, []string{"pods/ephemeralcontainers"}, nil, "update"),
			"seccomp/ephemeral/* and apparmor/ephemeral/* add an ephemeral container"},
		{rule([]string{""}, []string{"pods/exec"}, nil, "create", "get"),
			"the specs run commands in their containers (does mkdir fail, is the process confined); profiles/agent/apparmor-parser runs apparmor_parser in the agent pods; the runner reads each node's kernel facts in its agent pod; " +
				"get: an exec over WebSocket is a GET, authorized as get and create"},
		{rule([]string{""}, []string{"events"}, nil, "list", "create"),
			"list: a pod's events (why a container did not start) and the agent's events (profiles/node-status/events); " +
				"create only because the agent's Role grants it"},
		{rule([]string{""}, []string{"podtemplates"}, nil, "create"),
			"the template rules create a PodTemplate"},
		// Workloads.
		{rule([]string{"apps"}, []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, nil, "create"),
			"the template rules create each kind of workload (names generated); the server-side apply that creates the agent's DaemonSet and the aggregator's Deployment is authorized as create too"},
		{rule([]string{"apps"}, []string{"daemonsets", "deployments"}, names("daemonsets", "deployments"), "get", "patch"),
			"server-side apply of the agent's DaemonSet and the aggregator's Deployment; get: waiting until the agent is ready"},
		{rule([]string{"batch"}, []string{"jobs", "cronjobs"}, nil, "create"),
			"the template rules create a Job and a CronJob"},
		// The node agent's RBAC and admission policy.
		{rule([]string{"rbac.authorization.k8s.io"}, []string{"roles", "rolebindings"}, names("roles", "rolebindings"), "create", "patch"),
			"server-side apply of the agent's and the aggregator's Role and RoleBinding (removed with their namespace)"},
		{rule([]string{"rbac.authorization.k8s.io"}, []string{"clusterroles", "clusterrolebindings"}, names("clusterroles", "clusterrolebindings"), "create", "patch", "delete"),
			"the aggregator's ClusterRole and ClusterRoleBinding (nodes list and watch): applied, and deleted when the run ends"},
		{rule([]string{"admissionregistration.k8s.io"}, []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}, names("validatingadmissionpolicies", "validatingadmissionpolicybindings"), "create", "patch", "delete"),
			"the agent's own-node ValidatingAdmissionPolicy and its binding (API servers 1.32+): applied, and deleted when the run ends"},
		{rule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, crdNames(), "get", "create", "patch", "delete"),
			"the profile API's CRDs: looked for (get), applied when missing, deleted when the run ends if the run added them"},
		// RuntimeClasses of failure row 1.
		{rule([]string{"node.k8s.io"}, []string{"runtimeclasses"}, nil, "create"),
			"the runner creates the RuntimeClasses of the restricted runtime handlers (failure row 1) that do not exist yet"},
		{rule([]string{"node.k8s.io"}, []string{"runtimeclasses"}, nodefacts.RestrictedRuntimeHandlers(), "get", "delete"),
			"seccomp/failure/row-1 and apparmor/failure/row-1 read the RuntimeClass; the runner deletes those it created"},
		// The profile API (node agent).
		{rule([]string{api.Group}, []string{api.SeccompProfiles.Resource, api.AppArmorProfiles.Resource}, nil, "get", "list", "watch", "create", "patch", "delete"),
			"the fixture profiles (server-side apply, wait for Installed, delete), the profiles suite's own profiles (create, watch the aggregate, delete), " +
				"profiles/node-status/scale (create)"},
		{rule([]string{api.Group}, []string{api.SeccompProfiles.Resource + "/status", api.AppArmorProfiles.Resource + "/status"}, nil, "update"),
			"profiles/node-status/scale writes the aggregated status of its simulated profiles; the aggregator's Role grants the same"},
		{rule([]string{api.Group}, []string{api.StaticPods.Resource}, nil, "get", "list", "watch", "create", "delete"),
			"apparmor/static-pod/annotation-copy: a StaticPod object has the node agent write the manifest (create, delete); list: the runner's teardown; " +
				"get and watch only because the agent's Role grants them"},
		{rule([]string{api.Group}, []string{api.ProfileNodeStatuses.Resource}, nil, "get", "list", "watch", "create", "update", "delete"),
			"the node statuses: read while installing and by the profiles suite (get, list); profiles/node-status/scale writes simulated nodes' statuses (create); " +
				"watch, update and delete only because the agent's Role grants them"},
		// Not a resource.
		{rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
			"each apparmor suite process reads the API server's kubernetes_feature_enabled metric: is the AppArmor gate disabled " +
				"(the precondition of every apparmor rule, and apparmor/feature-gate)"},
	}
}

// union is the sorted names of the given resources in objs.
func union(objs map[string][]string, resources ...string) []string {
	set := map[string]bool{}
	for _, r := range resources {
		for _, n := range objs[r] {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func rule(groups, resources, names []string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, ResourceNames: names, Verbs: verbs}
}

// Manifests are the ServiceAccount namespace/serviceAccount, the
// ClusterRole ClusterRoleName with Rules and the ClusterRoleBinding that
// binds them, as a YAML stream for 'kubectl apply -f -'.
func Manifests(namespace, serviceAccount string) ([]byte, error) {
	if namespace == "" {
		namespace = DefaultServiceAccountNamespace
	}
	if serviceAccount == "" {
		serviceAccount = DefaultServiceAccount
	}
	labels := map[string]string{"app.kubernetes.io/part-of": "skewproof", "app.kubernetes.io/name": ClusterRoleName}
	objs := []any{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: namespace, Labels: labels},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: labels},
			Rules:      Rules(),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}},
		},
	}
	var buf bytes.Buffer
	buf.WriteString("# The least privilege of 'skewproof run --kubeconfig' (seccomp, apparmor and profiles suites); see docs/rbac.md.\n")
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("marshalling %T: %w", o, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(bytes.ReplaceAll(b, []byte("  creationTimestamp: null\n"), nil))
	}
	return buf.Bytes(), nil
}
