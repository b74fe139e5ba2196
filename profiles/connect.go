// Profile distribution through the cluster's API (the security-profiles-operator scalable-status design):
// SeccompProfile and AppArmorProfile objects, a node agent DaemonSet that
// puts them on every node and reports one ProfileNodeStatus per profile and
// node, and an aggregator that keeps each profile's aggregated status. This
// works on any cluster (no docker exec), given the agent image on its nodes.
//
// This file holds the connection to the cluster and the interval its waits
// share; image.go builds the agent image, deploy.go deploys the agent,
// install.go installs profiles, staticpods.go puts static pods on nodes and
// teardown.go removes it all.

package profiles

import (
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/skewproof/skewproof/internal/kubeclient"
	"github.com/skewproof/skewproof/profiles/agent"
)

// pollInterval is how often the waits of this package look at the cluster.
const pollInterval = 500 * time.Millisecond

// FieldManager is the field manager of everything skewproof applies.
const FieldManager = "skewproof"

// Cluster is a connection to the cluster profiles are distributed in.
type Cluster struct {
	Config    *rest.Config
	Core      kubernetes.Interface
	Dynamic   dynamic.Interface
	Namespace string // of the agent, the profiles and their node statuses
}

// Connect connects to the cluster of a kubeconfig; namespace defaults to
// agent.DefaultNamespace.
func Connect(kubeconfig, namespace string) (*Cluster, error) {
	cfg, err := kubeclient.Config(kubeconfig)
	if err != nil {
		return nil, err
	}
	return NewCluster(cfg, namespace)
}

// NewCluster connects with a REST configuration.
func NewCluster(cfg *rest.Config, namespace string) (*Cluster, error) {
	if namespace == "" {
		namespace = agent.DefaultNamespace
	}
	c, err := kubeclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Config: cfg, Core: c.Core, Dynamic: c.Dynamic, Namespace: namespace}, nil
}
