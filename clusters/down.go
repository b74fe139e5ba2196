// Down: a cluster and what skewproof made for it deleted.

package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Down deletes a cluster: its nodes (through kind), its Docker network and
// its default kubeconfig file. Deleting a cluster that does not exist is not
// an error.
func Down(ctx context.Context, name, kubeconfig string, p *Progress) error {
	var errs []error
	if kubeconfig == "" {
		kubeconfig = DefaultKubeconfig(name)
	}
	os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", NetworkName(name))
	if err := removeAppArmorNodes(name); err != nil {
		errs = append(errs, fmt.Errorf("removing the AppArmor node of %s: %w", name, err))
	}
	if err := provider(p).Delete(name, kubeconfig); err != nil {
		errs = append(errs, fmt.Errorf("deleting nodes of %s: %w", name, err))
	}
	if out, err := docker(ctx, "network", "ls", "-q", "--filter", "name=^"+NetworkName(name)+"$"); err == nil && out != "" {
		if _, err := docker(ctx, "network", "rm", NetworkName(name)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		removeOwner(name)
	}
	if kubeconfig == DefaultKubeconfig(name) {
		if err := os.Remove(kubeconfig); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
