package harness

import (
	"github.com/skewproof/skewproof/internal/rbac"
)

// Permissions are what every suite of the harness does on the API: the e2e
// framework's namespace per spec and the harness's bookkeeping around it.
// Each suite's declaration holds them besides its own (Suite.Permissions).
var Permissions = []rbac.Rule{
	rbac.Core([]string{"namespaces"}, nil,
		"a namespace per spec: the e2e framework creates it, reads it, deletes it and lists namespaces while waiting for the deletion; "+
			"the harness lists its process's namespaces to remove what a killed process left", "get", "list", "create", "delete"),
	rbac.Core([]string{"serviceaccounts"}, nil,
		"the e2e framework waits for the default service account of each spec's namespace (a watch; list where the API server does not stream the initial list)", "list", "watch"),
	rbac.Core([]string{"configmaps"}, nil,
		"the e2e framework waits for kube-root-ca.crt in each spec's namespace (a watch; list as for serviceaccounts)", "list", "watch"),
	rbac.Core([]string{"nodes"}, nil, "the suites list the nodes (kubelet versions, runtimes, workers)", "get", "list"),
}

// ScenarioPermissions are what the harness's scenarios do (pods with a
// profile, their updates, pod templates and workloads, ephemeral
// containers, the effect probes): the suites that run scenarios declare
// them (Suite.Permissions).
var ScenarioPermissions = []rbac.Rule{
	rbac.Core([]string{"pods"}, nil,
		"the specs' pods: created, read with their status, watched while waiting (a change wakes the wait), updated (the update rules), deleted; "+
			"listed: the pods of a workload", "get", "list", "watch", "create", "update", "delete"),
	rbac.Core([]string{"pods/ephemeralcontainers"}, nil, "the ephemeral rules add an ephemeral container", "update"),
	rbac.Core([]string{"pods/exec"}, nil,
		"the effect probes run commands in the specs' containers (is the syscall blocked, is the write denied); "+
			"an exec over WebSocket is a GET, authorized as get and create", "get", "create"),
	rbac.Core([]string{"events"}, nil, "a pod's events: why a container did not start (listed, and watched while waiting)", "list", "watch"),
	rbac.Core([]string{"podtemplates"}, nil, "the template rules create a PodTemplate", "create"),
	rbac.New([]string{"apps"}, []string{"deployments", "replicasets", "statefulsets", "daemonsets"}, nil,
		"the template rules create each kind of workload (names generated)", "create"),
	rbac.New([]string{"batch"}, []string{"jobs", "cronjobs"}, nil, "the template rules create a Job and a CronJob", "create"),
}
