package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
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
		Use:   "down",
		Short: "delete a cluster and everything it created",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := clusters.List(cmd.Context()); err != nil {
				return err
			}
			p := clusters.NewProgress(os.Stderr)
			if err := clusters.Down(cmd.Context(), name, kubeconfig, p); err != nil {
				return err
			}
			p.Step("cluster %s deleted", name)
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
			names, err := clusters.List(cmd.Context())
			if err != nil {
				return err
			}
			for _, n := range names {
				fmt.Println(n)
			}
			return nil
		},
	}
}

func validName(n string) error {
	if n == "" || len(n) > 40 {
		return usagef("--name must be 1-40 characters")
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return usagef("--name %q: use lower-case letters, digits and '-'", n)
		}
	}
	return nil
}
