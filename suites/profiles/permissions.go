package profiles

import (
	"slices"

	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

// permissions are the API permissions of the suite's specs: its own node
// agent deployed into Namespace and removed (profiles.DeployerRules), the
// profiles installed through it, and what the specs below do.
func permissions() []rbac.Rule {
	deploy, err := profiles.DeployerRules(Namespace)
	if err != nil {
		panic(err) // the agent's objects and the CRDs are built in
	}
	return slices.Concat(deploy, profiles.InstallerRules(), []rbac.Rule{
		rbac.Core([]string{"pods"}, nil, "the agent pods: their names and nodes", "list"),
		rbac.Core([]string{"pods/exec"}, nil,
			"profiles/agent/apparmor-parser runs apparmor_parser in the agent pods (an exec over WebSocket is a GET, authorized as get and create)", "get", "create"),
		rbac.Core([]string{"events"}, nil, "profiles/node-status/events reads the agent's events", "list"),
		rbac.Core([]string{"serviceaccounts/token"}, []string{agent.AgentName}, "profiles/agent/own-node asks a token bound to an agent pod, to act as that agent", "create"),
		rbac.New([]string{api.Group}, []string{api.SeccompProfiles.Resource, api.AppArmorProfiles.Resource}, nil,
			"the suite's profiles: created, watched (the aggregate status), listed and deleted; profiles/node-status/scale creates its simulated profiles", "list", "watch", "create", "delete"),
		rbac.New([]string{api.Group}, []string{api.ProfileNodeStatuses.Resource}, nil,
			"profiles/node-status/scale writes the node statuses of its simulated nodes and lists them by label", "list", "create"),
		rbac.New([]string{api.Group}, []string{api.SeccompProfiles.Resource + "/status", api.AppArmorProfiles.Resource + "/status"}, nil,
			"profiles/node-status/scale writes the aggregated status of its simulated profiles", "update"),
	})
}
