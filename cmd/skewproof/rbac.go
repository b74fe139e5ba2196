package main

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/runner"
)

func newRBACCmd() *cobra.Command {
	var ns, sa string
	c := &cobra.Command{
		Use:   "rbac [--namespace NS] [--service-account NAME] | kubectl apply -f -",
		Short: "print the ServiceAccount, ClusterRole and ClusterRoleBinding a run against an existing cluster needs (YAML for kubectl apply)",
		Long: "Print the ServiceAccount, ClusterRole and ClusterRoleBinding a run against an existing cluster needs (YAML for kubectl apply).\n\n" +
			"The rules and why each is needed: docs/rbac.md.",
		Args: noArgs("; name the ServiceAccount with --namespace and --service-account"),
		RunE: func(*cobra.Command, []string) error {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				return cli.Usagef("--namespace %q is no namespace name: %s", ns, msgs[0])
			}
			if msgs := validation.IsDNS1123Subdomain(sa); len(msgs) > 0 {
				return cli.Usagef("--service-account %q is no ServiceAccount name: %s", sa, msgs[0])
			}
			b, err := runner.Manifests(ns, sa)
			if err != nil {
				return err
			}
			_, err = oracleOut.Write(b)
			return err
		},
	}
	c.Flags().StringVar(&ns, "namespace", runner.DefaultServiceAccountNamespace, "namespace of the ServiceAccount (it must exist)")
	c.Flags().StringVar(&sa, "service-account", runner.DefaultServiceAccount, "name of the ServiceAccount the ClusterRole "+runner.ClusterRoleName+" is bound to")
	return c
}
