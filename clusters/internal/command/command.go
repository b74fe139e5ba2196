// Package command runs the host commands of the builders (go, debootstrap,
// chroot, tar) with their output kept for the error.
package command

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Run runs name with args in dir with the environment env; on failure the
// error holds the last lines of its output.
func Run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	// SIGTERM, not the default SIGKILL, lets go and debootstrap clean up
	// (go's work directory, debootstrap's mounts); so does the death of
	// skewproof itself.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, Tail(out.String(), 40))
	}
	return nil
}

// Tail is the last lines of s.
func Tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
