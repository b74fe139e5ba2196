package apparmor

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// permissions are the API permissions of the suite's specs: the
// scenarios', failure row 1's RuntimeClasses, the static pods written
// through the fixtures' agent, and what the specs below read.
func permissions() []rbac.Rule {
	return slices.Concat(h.ScenarioPermissions, nodefacts.RuntimeClassRules(), profiles.InstallerRules(), []rbac.Rule{
		rbac.Core([]string{"namespaces"}, nil, "apparmor/psa sets the Pod Security labels of its namespace", "update"),
		rbac.Core([]string{"nodes/proxy"}, nil,
			"apparmor/static-pod/annotation-copy: the kubelet's /configz (staticPodPath) and /pods (the static pod as the kubelet sees it) through the API server's node proxy", "get"),
		{PolicyRule: rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
			Why: "each apparmor suite process reads the API server's kubernetes_feature_enabled metric: is the AppArmor gate disabled " +
				"(the precondition of every apparmor rule, and apparmor/feature-gate)"},
	})
}
