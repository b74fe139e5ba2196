// Command launcher is bin/skewproof as 'make build' installs it. It runs
// 'skewproof simulate' itself, linking only the oracle (skew, skew/served,
// reports and cobra), so that a simulation starts like a small program
// instead of paying the package initialisation of client-go and kind; for
// every other command it replaces itself (execve: the same process, its
// signals and exit status) with the full CLI, skewproof-core, found beside
// it or on PATH. The full CLI (cmd/skewproof) is a complete skewproof on
// its own, simulate included: 'go install ./cmd/skewproof' or 'go run
// ./cmd/skewproof' need no launcher.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "simulate" {
		os.Exit(simulate(args))
	}
	core, err := findCore()
	if err == nil {
		// Keep argv[0]: the command line a run records is the one typed.
		err = syscall.Exec(core, append([]string{os.Args[0]}, args...), os.Environ())
	}
	fmt.Fprintf(os.Stderr, "skewproof: %v\n", err)
	os.Exit(1)
}

// simulate runs 'skewproof simulate' in this process, with the same
// command, flag errors and exit status as the full CLI.
func simulate(args []string) int {
	root := &cobra.Command{Use: "skewproof", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(cli.NewSimulateCmd(func() io.Writer { return os.Stdout }))
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(context.Background())
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", cmd.CommandPath(), err)
	if errors.As(err, new(cli.UsageError)) {
		return 2
	}
	return 1
}

// findCore returns skewproof-core beside this executable, else on PATH.
func findCore() (string, error) {
	self, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(self), cli.CoreName)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(cli.CoreName); err == nil {
		return p, nil
	}
	where := "this executable"
	if self != "" {
		where = self
	}
	return "", fmt.Errorf("%s not found beside %s or on PATH: 'make build' puts both in bin/; copy %s with skewproof (and skewproof-e2e.test) when you move them", cli.CoreName, where, cli.CoreName)
}
