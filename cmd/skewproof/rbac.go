package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/runner"
)

func newRBACCmd() *cobra.Command {
	var ns, sa, suites, suite string
	var profilesNS []string
	c := &cobra.Command{
		Use:   "rbac [--namespace NS] [--service-account NAME] [--suites LIST] | kubectl apply -f -",
		Short: "print the ServiceAccount, ClusterRole and ClusterRoleBinding a run against an existing cluster needs (YAML for kubectl apply)",
		Long: "Print the ServiceAccount, ClusterRole and ClusterRoleBinding a run against an existing cluster needs (YAML for kubectl apply).\n\n" +
			"The rules are the runner's own and those the suites declare (asked of the suite binary); with --suites, only those suites'.\n" +
			"The rules and why each is needed: docs/rbac.md.",
		Args: noArgs("; name the ServiceAccount with --namespace and --service-account"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				return cli.Usagef("--namespace %q is no namespace name: %s", ns, msgs[0])
			}
			if msgs := validation.IsDNS1123Subdomain(sa); len(msgs) > 0 {
				return cli.Usagef("--service-account %q is no ServiceAccount name: %s", sa, msgs[0])
			}
			bin, err := suiteBinary(suite)
			if err != nil {
				return err
			}
			decls, err := runner.Declarations(cmd.Context(), bin)
			if err != nil {
				return err
			}
			decls, err = runner.ResolveSuites(decls, splitList(suites), false)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			// What 'skewproof profiles install|status|teardown' do in
			// --profiles-namespace: the agent deployed and removed there,
			// profiles installed.
			var forProfiles [][]rbac.Rule
			if len(profilesNS) > 0 {
				for _, n := range profilesNS {
					if msgs := validation.IsDNS1123Label(n); len(msgs) > 0 {
						return cli.Usagef("--profiles-namespace %q is no namespace name: %s", n, msgs[0])
					}
				}
				deploy, err := profiles.DeployerRules(profilesNS...)
				if err != nil {
					return err
				}
				forProfiles = [][]rbac.Rule{deploy, profiles.InstallerRules()}
			}
			rules, err := runner.ExplainedRules(decls, forProfiles...)
			if err != nil {
				return err
			}
			b, err := runner.Manifests(ns, sa, rules)
			if err != nil {
				return err
			}
			_, err = oracleOut.Write(b)
			return err
		},
	}
	c.Flags().StringVar(&ns, "namespace", runner.DefaultServiceAccountNamespace, "namespace of the ServiceAccount (it must exist)")
	c.Flags().StringVar(&sa, "service-account", runner.DefaultServiceAccount, "name of the ServiceAccount the ClusterRole "+runner.ClusterRoleName+" is bound to")
	c.Flags().StringVar(&suites, "suites", "", "the suites the run will run, comma-separated (default: every suite of the suite binary)")
	c.Flags().StringSliceVar(&profilesNS, "profiles-namespace", nil, "also grant what 'skewproof profiles install|status|teardown --namespace NS' do in this namespace (repeatable; theirs is "+agent.DefaultNamespace+" unless told)")
	c.Flags().StringVar(&suite, "suite-binary", "", "the e2e binary whose suites declare their permissions (default: "+runner.SuiteBinaryName+" beside this executable)")
	return c
}

// suiteBinary is the e2e binary a command reads: flag when given (it must
// exist), else the one beside this executable.
func suiteBinary(flag string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", cli.Usagef("--suite-binary: %v", err)
		}
		return flag, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	bin, err := runner.FindSuiteBinary(exe)
	if err != nil {
		return "", cli.Usagef("%v", err)
	}
	return bin, nil
}
