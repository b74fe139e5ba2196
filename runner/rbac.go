package runner

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles"
	senv "github.com/skewproof/skewproof/suites/env"
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

// runnerRules are the permissions of what the runner itself does on a
// cluster for the fixtures the run's suites declare:
//
//   - always: list the nodes, remove the namespaces an earlier run left;
//   - the fixture profiles (senv.FixtureSeccompProfiles or
//     senv.FixtureAppArmorProfiles): the node agent deployed into
//     profiles.FixturesNamespace and removed (profiles.DeployerRules), the
//     fixtures installed through it, each node's kernel facts read in its
//     agent pod;
//   - senv.FixtureRuntimeClasses: the restricted handlers' RuntimeClasses.
func runnerRules(fixtures map[string]bool) ([]rbac.Rule, error) {
	out := []rbac.Rule{
		rbac.Core([]string{"nodes"}, nil, "the runner lists the nodes (kubelet versions, readiness, workers)", "list"),
		rbac.Core([]string{"namespaces"}, nil, "the runner removes the namespaces an earlier run left (by label)", "list", "delete"),
	}
	if fixtures[senv.FixtureSeccompProfiles] || fixtures[senv.FixtureAppArmorProfiles] {
		deploy, err := profiles.DeployerRules(profiles.FixturesNamespace)
		if err != nil {
			return nil, err
		}
		out = slices.Concat(out, deploy, profiles.InstallerRules(), []rbac.Rule{
			rbac.Core([]string{"pods"}, nil, "the runner finds the fixtures' agent pod of each node", "list"),
			rbac.Core([]string{"pods/exec"}, nil,
				"the runner reads each node's kernel facts in its agent pod (an exec over WebSocket is a GET, authorized as get and create)", "get", "create"),
		})
	}
	if fixtures[senv.FixtureRuntimeClasses] {
		out = append(out, nodefacts.RuntimeClassRules()...)
	}
	return out, nil
}

// ExplainedRules are the rules of the ClusterRole a run of the declared
// suites against an existing cluster needs ('skewproof run --kubeconfig'):
// the runner's own for the fixtures those suites declare, and the
// permissions each suite declares, merged (rbac.Merge) and sorted by API
// group and resource. No rule has a wildcard; the runner holds what it
// grants the node agent rather than escalate and bind
// (profiles.DeployerRules).
//
// extra are more rules to grant with them (skewproof rbac
// --profiles-namespace: what the profiles commands do).
func ExplainedRules(decls []senv.Suite, extra ...[]rbac.Rule) ([]rbac.Rule, error) {
	fixtures := map[string]bool{}
	lists := [][]rbac.Rule{nil}
	for _, d := range decls {
		for _, f := range d.Fixtures {
			fixtures[f] = true
		}
		lists = append(lists, d.Permissions)
	}
	own, err := runnerRules(fixtures)
	if err != nil {
		return nil, err
	}
	lists[0] = own
	return sortRules(rbac.Merge(append(lists, extra...)...)), nil
}

// sortRules sorts rules as the ClusterRole lists them: by API group (the
// core group first), resource, and the rules on any object before those
// restricted by name; non-resource URLs last.
func sortRules(rules []rbac.Rule) []rbac.Rule {
	slices.SortStableFunc(rules, func(a, b rbac.Rule) int {
		return cmp.Or(cmp.Compare(len(a.NonResourceURLs), len(b.NonResourceURLs)),
			cmp.Compare(groupRank(a), groupRank(b)), strings.Compare(first(a.APIGroups), first(b.APIGroups)),
			strings.Compare(first(a.Resources), first(b.Resources)),
			cmp.Compare(len(a.ResourceNames), len(b.ResourceNames)))
	})
	return rules
}

// groupRank puts the core API group first.
func groupRank(r rbac.Rule) int {
	if first(r.APIGroups) == "" {
		return 0
	}
	return 1
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Manifests are the ServiceAccount namespace/serviceAccount, the
// ClusterRole ClusterRoleName with rules and the ClusterRoleBinding that
// binds them, as a YAML stream for 'kubectl apply -f -'.
func Manifests(namespace, serviceAccount string, rules []rbac.Rule) ([]byte, error) {
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
			Rules:      rbac.Policy(rules),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}},
		},
	}
	var buf bytes.Buffer
	buf.WriteString("# The least privilege of 'skewproof run --kubeconfig' with the suites it was printed for; see docs/rbac.md.\n")
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
