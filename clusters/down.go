// Down: a cluster and what skewproof made for it deleted.

package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/skewproof/skewproof/clusters/internal/command"
)

// down deletes a cluster: its nodes (through kind), its Docker network and
// its default kubeconfig file. Deleting a cluster that does not exist is not
// an error. A failed attempt is made again, twice: a terminal's Ctrl-C
// reaches the docker commands of a clean-up that is under way, but not the
// ones started after it. kind's Delete finds the nodes by their cluster
// label and does not read the network from the environment
// (kindnetwork.go), so Down sets none and takes no lock: it removes the
// network itself.
func down(ctx context.Context, h command.Host, name, kubeconfig string) error {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = downOnce(ctx, h, name, kubeconfig); err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Second)
	}
	return err
}

func downOnce(ctx context.Context, h command.Host, name, kubeconfig string) error {
	p := h.Progress
	var errs []error
	if kubeconfig == "" {
		kubeconfig = defaultKubeconfig(name)
	}
	if err := removeAppArmorNodes(name); err != nil {
		errs = append(errs, fmt.Errorf("removing the AppArmor node of %s: %w", name, err))
	}
	if err := kindProvider(p).Delete(name, kubeconfig); err != nil {
		errs = append(errs, fmt.Errorf("deleting nodes of %s: %w", name, err))
	}
	if out, err := h.Docker(ctx, "network", "ls", "-q", "--filter", "name=^"+networkName(name)+"$"); err == nil && out != "" {
		if _, err := h.Docker(ctx, "network", "rm", networkName(name)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		removeOwner(name)
	}
	if kubeconfig == defaultKubeconfig(name) {
		if err := os.Remove(kubeconfig); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
