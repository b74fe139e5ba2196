// Command skewproof is a conformance and simulation harness for the Kubernetes
// seccomp and AppArmor APIs under kube-apiserver/kubelet version skew.
//
// Each command is a cobra command in a file of its own: flags, then one call
// into the package that does the work. Exit status: 0 ok, 1 a failure, 2 a
// usage error (one line on stderr), 130 an interrupt (SIGINT or SIGTERM
// cancel the command's context).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/owner"
	"github.com/skewproof/skewproof/runner"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs the command line args (without the program name) and returns the
// exit status.
func run(args []string) int {
	// Every temporary file of the command and of what it starts goes into
	// a directory of its own, removed at the end (one left by a killed
	// skewproof is removed by the next).
	if remove, err := owner.TempRoot(); err == nil {
		defer remove()
	}
	ctx, stop := interruptible()
	defer stop()
	cmd, err := execute(ctx, args)
	name := "skewproof"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	switch {
	case err == nil && ctx.Err() != nil:
		// The interrupt came when the work was done (a run's last spec had
		// finished; its report and clean-up completed): the result stands.
		fmt.Fprintf(os.Stderr, "%s: interrupted after the work was done; its results are complete and the clean-up finished\n", name)
		return 0
	case err == nil:
		return 0
	case ctx.Err() != nil:
		// Interrupted (SIGINT, SIGTERM): whatever failed afterwards — the
		// commands it runs get a terminal's Ctrl-C too — is the interrupt.
		if ie := new(runner.InterruptedError); errors.As(err, ie) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, ie)
		} else {
			fmt.Fprintf(os.Stderr, "%s: interrupted; what it had created was removed\n", name)
		}
		return 130
	case errors.As(err, new(cli.UsageError)):
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 2
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
}

// interruptible is a context cancelled by the first SIGINT or SIGTERM. That
// one starts the clean-up; later ones are reported and ignored, so that a
// second Ctrl-C does not leave half-removed clusters behind.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for s := range sigs {
			n++
			if n == 1 {
				cancel()
				continue
			}
			fmt.Fprintf(os.Stderr, "skewproof: %v again: still cleaning up, please wait (SIGKILL would leave what is not removed yet; 'skewproof cluster list' finds it)\n", s)
		}
	}()
	return ctx, func() { signal.Stop(sigs); close(sigs); cancel() }
}

// execute runs args through a new command tree and returns the command that
// ran (or failed to parse) and its error.
func execute(ctx context.Context, args []string) (*cobra.Command, error) {
	root := newRoot()
	root.SetArgs(args)
	return root.ExecuteContextC(ctx)
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "skewproof",
		Short: "conformance and simulation harness for the seccomp and AppArmor APIs under kube-apiserver/kubelet version skew",
		// Errors are printed once, as one line, by run.
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("give a command; run 'skewproof --help' for the list")
			}
			return cli.Usagef("unknown command %q; run 'skewproof --help' for the list", strings.Join(args, " "))
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(
		newRunCmd(), cli.NewSimulateCmd(func() io.Writer { return oracleOut }), newMatrixCmd(), newPreflightCmd(),
		newClusterCmd(), newImagesCmd(), newProfilesCmd(),
		newBundleCmd(), newReportCmd(), newSonobuoyPluginCmd(), newRBACCmd(),
		newAgentCmd(), newConformanceEntrypointCmd(),
	)
	rejectStrayArgs(root)
	return root
}

// rejectStrayArgs gives every command that declares no positional
// arguments noArgs: cobra's default accepts and ignores them, so that
// 'cluster down measure' would delete the cluster named skewproof.
func rejectStrayArgs(c *cobra.Command) {
	if c.Args == nil && !c.DisableFlagParsing {
		c.Args = noArgs("")
	}
	for _, s := range c.Commands() {
		rejectStrayArgs(s)
	}
}

// group is a command that only holds subcommands: without one, or with an
// unknown one, it is a usage error.
func group(use, short string, children ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args: func(c *cobra.Command, args []string) error {
			var names []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			if len(args) == 0 {
				return cli.Usagef("give a subcommand: %s", strings.Join(names, ", "))
			}
			return cli.Usagef("unknown command %q; subcommands: %s", args[0], strings.Join(names, ", "))
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	c.AddCommand(children...)
	return c
}

// noArgs rejects positional arguments; hint follows the message.
func noArgs(hint string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cli.Usagef("unexpected argument %q%s", args[0], hint)
		}
		return nil
	}
}

// oracleOut is where simulate, matrix and rbac write; tests replace it.
var oracleOut io.Writer = os.Stdout
