package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/progress"
)

// DefaultAPIServer is the apiserver version used when none is given.
const DefaultAPIServer = "1.37.2"

func newClusterCmd() *cobra.Command {
	return group("cluster", "create, delete and list kind clusters with skewed kubelets",
		newClusterUpCmd(), newClusterDownCmd(), newClusterListCmd())
}

func newClusterDownCmd() *cobra.Command {
	var name, kubeconfig string
	c := &cobra.Command{
		Use:   "down --name NAME",
		Short: "delete a cluster and everything it created",
		Args:  noArgs("; name the cluster with --name"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dockerReady(cmd.Context()); err != nil {
				return err
			}
			p := progress.New(os.Stderr)
			prov := clusters.NewProvider(p)
			existing, err := prov.List(cmd.Context())
			if err != nil {
				return err
			}
			// Down also removes what a half-made cluster left (its network,
			// kubeconfig, owner record), so it runs either way; the message
			// says what was found.
			if err := prov.Down(cmd.Context(), name, kubeconfig); err != nil {
				return err
			}
			if slices.Contains(existing, name) {
				p.Step("cluster %s deleted", name)
			} else {
				p.Step("no cluster %s was found (see 'skewproof cluster list'); nothing of it is left", name)
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "skewproof", "cluster name")
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig the cluster was written to (default ~/.kube/skewproof-NAME.yaml)")
	return c
}

func newClusterListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list the clusters",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dockerReady(cmd.Context()); err != nil {
				return err
			}
			listed, err := clusters.NewProvider(nil).ListOwned(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSTATE")
			for _, l := range listed {
				fmt.Fprintf(w, "%s\t%s\n", l.Name, l.State)
			}
			return w.Flush()
		},
	}
}

func validName(n string) error {
	if n == "" || len(n) > 40 {
		return cli.Usagef("--name must be 1-40 characters")
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return cli.Usagef("--name %q: use lower-case letters, digits and '-'", n)
		}
	}
	return nil
}

// dockerReady says whether the docker client is installed and reaches its
// daemon, with the remedy when not.
func dockerReady(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return errors.New("the docker client is not installed (no docker in PATH); install Docker, e.g. 'sudo hack/setup-host.sh' (Debian's docker.io)")
	}
	_, err := clusters.NewProvider(nil).List(ctx)
	return err
}
