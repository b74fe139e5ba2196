package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/skewproof/skewproof/runner"
)

func init() {
	register(command{
		name:    "rbac",
		summary: "print the ServiceAccount, ClusterRole and ClusterRoleBinding a run against an existing cluster needs (YAML for kubectl apply)",
		run:     runRBAC,
	})
}

func runRBAC(ctx context.Context, args []string) error {
	fs := newFlagSet("rbac")
	ns := fs.String("namespace", runner.DefaultServiceAccountNamespace, "namespace of the ServiceAccount (it must exist)")
	sa := fs.String("service-account", runner.DefaultServiceAccount, "name of the ServiceAccount the ClusterRole "+runner.ClusterRoleName+" is bound to")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: skewproof rbac [--namespace NS] [--service-account NAME] | kubectl apply -f -\n\nThe rules and why each is needed: docs/rbac.md.")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v; run 'skewproof rbac -h'", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; name the ServiceAccount with --namespace and --service-account", fs.Arg(0))
	}
	if msgs := validation.IsDNS1123Label(*ns); len(msgs) > 0 {
		return usagef("--namespace %q is no namespace name: %s", *ns, msgs[0])
	}
	if msgs := validation.IsDNS1123Subdomain(*sa); len(msgs) > 0 {
		return usagef("--service-account %q is no ServiceAccount name: %s", *sa, msgs[0])
	}
	b, err := runner.Manifests(*ns, *sa)
	if err != nil {
		return err
	}
	_, err = oracleOut.Write(b)
	return err
}
