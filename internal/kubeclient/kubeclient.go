// Package kubeclient is the one place a kubeconfig becomes clients: the
// runner, the profiles package, the node agent, the suites and the CLI all
// connect through it, so that a bad kubeconfig reads the same everywhere.
package kubeclient

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config is the REST configuration of a kubeconfig file, or the pod's
// in-cluster configuration when kubeconfig is empty.
func Config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("not in a pod (%v): pass --kubeconfig", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// Clients are the typed and the dynamic client of one configuration.
type Clients struct {
	Config  *rest.Config
	Core    kubernetes.Interface
	Dynamic dynamic.Interface
}

// New returns the clients of a configuration.
func New(cfg *rest.Config) (*Clients, error) {
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Config: cfg, Core: core, Dynamic: dyn}, nil
}

// Load returns the clients of a kubeconfig file (in-cluster when empty).
func Load(kubeconfig string) (*Clients, error) {
	cfg, err := Config(kubeconfig)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}
