// Command skewproof is a conformance and simulation harness for the Kubernetes
// seccomp and AppArmor APIs under kube-apiserver/kubelet version skew.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand of the CLI. Files of this package register their
// commands from init functions, so each command lives in its own file.
type command struct {
	name    string // e.g. "simulate" or "cluster up"
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

// usageError is an error caused by the user's input; it is printed as one
// line and the process exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: skewproof <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-18s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'skewproof <command> -h' for the flags of a command.")
}

// lookup finds the longest registered command name that prefixes args.
func lookup(args []string) (command, []string, bool) {
	for n := len(args); n > 0; n-- {
		if c, ok := commands[strings.Join(args[:n], " ")]; ok {
			return c, args[n:], true
		}
	}
	return command{}, nil, false
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, rest, ok := lookup(args)
	if !ok {
		fmt.Fprintf(os.Stderr, "skewproof: unknown command %q; run 'skewproof help' for the list\n", strings.Join(args, " "))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := c.run(ctx, rest)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(os.Stderr, "skewproof %s: interrupted; what it had created was removed\n", c.name)
		return 130
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "skewproof %s: %v\n", c.name, err)
		return 2
	default:
		fmt.Fprintf(os.Stderr, "skewproof %s: %v\n", c.name, err)
		return 1
	}
}

// newFlagSet returns a flag set that reports errors through run's return
// value instead of exiting.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("skewproof "+name, flag.ContinueOnError)
	return fs
}
