// Package cli holds what skewproof's two executables share: the usage
// error that exits with status 2, the flag error wording, and the
// simulate command, which both the full CLI (cmd/skewproof, installed as
// bin/skewproof-core) and the launcher (cmd/launcher, bin/skewproof) run.
// It must stay light: the launcher links only this package, skew,
// skew/served and reports, and a test keeps client-go and kind out of it.
package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError is an error caused by the user's input; it is printed as one
// line and the process exits with status 2.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{Msg: fmt.Sprintf(format, args...)}
}

// FlagError turns cobra's flag errors into usage errors that name the
// command's help.
func FlagError(c *cobra.Command, err error) error {
	if strings.HasPrefix(err.Error(), "unknown shorthand flag") {
		return Usagef("%v (long flags take two dashes: --name); run '%s --help'", err, c.CommandPath())
	}
	return Usagef("%v; run '%s --help'", err, c.CommandPath())
}

// CoreName is the file name of the full CLI (cmd/skewproof) beside the
// launcher: 'make build' installs bin/skewproof (the launcher) and
// bin/skewproof-core.
const CoreName = "skewproof-core"
