package main

import (
	"context"
	"errors"
	"flag"

	"github.com/spf13/cobra"
)

// command is a command that still parses its flags with the standard flag
// package; register adds it to the tree as a cobra command that hands it the
// raw arguments.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string) error
}

var legacyCommands []command

func register(c command) { legacyCommands = append(legacyCommands, c) }

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("skewproof "+name, flag.ContinueOnError)
}

func addLegacy(root *cobra.Command) {
	for _, c := range legacyCommands {
		root.AddCommand(&cobra.Command{
			Use: c.name, Short: c.summary, DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := c.run(cmd.Context(), args); !errors.Is(err, flag.ErrHelp) {
					return err
				}
				return nil
			},
		})
	}
}
