// The permissions of what this package does on a cluster: deploying and
// removing the node agent, and installing profiles through it. The runner
// grants them for its fixtures, and the suites that do either declare them
// (docs/rbac.md).

package profiles

import (
	"fmt"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

// DeployerRules are the permissions Deploy and Teardown need to put the
// node agent into each of namespaces and remove it again, restricted by
// name where the names are known:
//
//   - server-side apply of the agent's objects (agent.Objects) and of the
//     profile API's CRDs, authorized as create and patch of each by name;
//   - the waits until the agent is Ready (its DaemonSet, its pods, the
//     nodes) and the teardown (the cluster-scoped objects by name, what the
//     agent put on nodes);
//   - every permission the agent's Roles and ClusterRoles grant. Kubernetes
//     lets a subject create a role only with permissions it holds itself
//     (or with the escalate verb), and bind one only when it holds its
//     permissions (or with bind); a deployer that holds the agent's small
//     set grants nothing beyond it, where escalate and bind together would
//     let it grant itself anything.
func DeployerRules(namespaces ...string) ([]rbac.Rule, error) {
	names := map[schemaKey][]string{}
	var keys []schemaKey
	var granted []rbac.Rule
	for _, ns := range namespaces {
		objs, err := agent.Objects(agent.DeployOptions{Namespace: ns, Image: "unused", OwnNodePolicy: true})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			k := schemaKey{o.Resource.Group, o.Resource.Resource, !o.Namespaced()}
			if _, seen := names[k]; !seen {
				keys = append(keys, k)
			}
			if n := o.Object.GetName(); !slices.Contains(names[k], n) {
				names[k] = append(names[k], n)
			}
			switch kind := o.Object.GetKind(); kind {
			case "Role", "ClusterRole":
				var role rbacv1.ClusterRole
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object.Object, &role); err != nil {
					return nil, fmt.Errorf("%s %s: %w", kind, o.Object.GetName(), err)
				}
				for _, r := range role.Rules {
					granted = append(granted, rbac.Rule{PolicyRule: r,
						Why: fmt.Sprintf("held because the node agent's %s grants it (no escalate or bind)", kind)})
				}
			}
		}
	}
	var out []rbac.Rule
	for _, k := range keys {
		sort.Strings(names[k])
		verbs := []string{"create", "patch"}
		why := "server-side apply of the node agent's " + k.resource
		if k.cluster {
			verbs = append(verbs, "get", "delete")
			why += "; removed by name when the run ends (get: waiting until it is gone)"
		}
		out = append(out, rbac.New([]string{k.group}, []string{k.resource}, names[k], why, verbs...))
	}
	crds, err := api.CRDs()
	if err != nil {
		return nil, err
	}
	var crdNames []string
	for _, c := range crds {
		crdNames = append(crdNames, c.GetName())
	}
	sort.Strings(crdNames)
	var agentResources []string
	for _, kind := range api.AgentKinds {
		res, _ := api.AgentResource(kind)
		agentResources = append(agentResources, res.Resource)
	}
	out = append(out,
		rbac.New([]string{api.CRDResource.Group}, []string{api.CRDResource.Resource}, crdNames,
			"the profile API's CRDs: looked for (get), applied when missing, deleted when the run ends if the run added them", "get", "create", "patch", "delete"),
		rbac.New([]string{"apps"}, []string{"daemonsets"}, names[schemaKey{"apps", "daemonsets", false}],
			"waiting until the node agent is Ready on every node", "get"),
		rbac.Core([]string{"pods"}, nil, "waiting until the node agent is Ready (its pods, and what holds a namespace left terminating)", "list"),
		rbac.Core([]string{"nodes"}, nil, "the nodes the node agent must be Ready on", "get", "list"),
		rbac.New([]string{api.Group}, agentResources, nil, "the teardown removes what the agents put on nodes, so that they remove its files", "list", "delete"),
	)
	return rbac.Merge(out, granted), nil
}

// schemaKey is a resource of the agent's objects.
type schemaKey struct {
	group, resource string
	cluster         bool
}

// InstallerRules are the permissions Install and Uninstall need: the
// profiles (and StaticPods) applied, read until every node reports them,
// and deleted; their node statuses read.
func InstallerRules() []rbac.Rule {
	var resources []string
	for _, kind := range api.AgentKinds {
		res, _ := api.AgentResource(kind)
		resources = append(resources, res.Resource)
	}
	return []rbac.Rule{
		rbac.New([]string{api.Group}, resources, nil,
			"profiles installed through the node agent: server-side apply (create, patch), read until installed (get), deleted", "get", "create", "patch", "delete"),
		rbac.New([]string{api.Group}, []string{api.ProfileNodeStatuses.Resource}, nil,
			"the node statuses of an installed profile, read until every node reports it and until they are gone", "get", "list"),
	}
}
