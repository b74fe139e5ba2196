// A cluster's kubeconfig: where it goes unless told, and a client for it.

package clusters

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultKubeconfig is where a cluster's kubeconfig goes unless told.
func DefaultKubeconfig(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".kube", "skewproof-"+name+".yaml")
}

// Clientset returns a client for the cluster of a kubeconfig.
func Clientset(kubeconfig string) (*kubernetes.Clientset, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	return kubernetes.NewForConfig(rc)
}
