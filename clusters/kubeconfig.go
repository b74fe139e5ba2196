// A cluster's kubeconfig: where it goes unless told (clients for it:
// package internal/kubeclient).

package clusters

import (
	"os"
	"path/filepath"
)

// defaultKubeconfig is where a cluster's kubeconfig goes unless told.
func defaultKubeconfig(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".kube", "skewproof-"+name+".yaml")
}
