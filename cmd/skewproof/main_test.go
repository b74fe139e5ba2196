package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Usage errors of the command tree itself: exit 2 and one line on stderr
// that names the command, without a usage dump.
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "skewproof: give a command"},
		{[]string{"no-such-command"}, `skewproof: unknown command "no-such-command"`},
		{[]string{"cluster"}, "skewproof cluster: give a subcommand: down, list, up"},
		{[]string{"cluster", "sideways"}, `skewproof cluster: unknown command "sideways"`},
		{[]string{"images", "frobnicate"}, `skewproof images: unknown command "frobnicate"`},
		{[]string{"run", "--no-such-flag"}, "skewproof run: unknown flag: --no-such-flag"},
		{[]string{"run", "-apiserver", "1.37.2"}, "long flags take two dashes"},
		{[]string{"run", "--timeout", "soon"}, `skewproof run: invalid argument "soon" for "--timeout"`},
		{[]string{"conformance-entrypoint", "--focus", "x"}, `skewproof conformance-entrypoint: unexpected argument "--focus"`},
	} {
		code, _, stderr := runCaptured(t, c.args...)
		if code != 2 || !strings.HasPrefix(stderr, "skewproof") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}

func TestHelpAndCompletion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"cluster", "--help"}, {"bundle", "verify", "-h"},
		{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}} {
		if code, _, stderr := runCaptured(t, args...); code != 0 || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// The hidden commands keep the argv of the images that run them
// (profiles/agent's DaemonSet and Deployment, the conformance image).
func TestHiddenCommands(t *testing.T) {
	root := newRoot()
	for _, c := range []struct {
		path string
		argv []string
	}{
		{"skewproof agent", []string{"agent", "--node=n", "--namespace=ns", "--seccomp-root=/r", "--static-pod-dir=/d", "--static-pod-path=/p", "--apparmor-load=false"}},
		{"skewproof agent aggregate", []string{"agent", "aggregate", "--namespace=ns"}},
		{"skewproof agent probe", []string{"agent", "probe"}},
		{"skewproof conformance-entrypoint", []string{"conformance-entrypoint"}},
	} {
		cmd, rest, err := root.Find(c.argv)
		if err != nil || cmd.CommandPath() != c.path {
			t.Errorf("%q: found %q, %v", c.argv, cmd.CommandPath(), err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%q: %v", c.argv, err)
		}
	}
	for _, name := range []string{"agent", "conformance-entrypoint"} {
		if c, _, err := root.Find([]string{name}); err != nil || !c.Hidden {
			t.Errorf("%s is not a hidden command: %v", name, err)
		}
	}
}

// No command ignores a positional argument it does not take: 'cluster down
// measure' once deleted the cluster named skewproof. Every runnable command
// of the tree is given one (cobra adds help and completion only when it
// executes); those that take positionals are named here.
func TestStrayArgumentIsRefused(t *testing.T) {
	takesArgs := map[string]bool{"skewproof bundle verify": true, "skewproof report": true, "skewproof report diff": true}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if c.Runnable() && !c.DisableFlagParsing && !takesArgs[path] {
			n++
			argv := append(strings.Fields(path)[1:], "stray")
			code, stdout, stderr := runCaptured(t, argv...)
			want := path + `: unexpected argument "stray"`
			if c.HasSubCommands() && !strings.HasPrefix(stderr, want) {
				want = path + `: unknown command "stray"`
			}
			if code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", argv, code, stdout, stderr, want)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
	if n < 20 {
		t.Fatalf("walked %d commands; the tree has more", n)
	}
	if code, _, stderr := runCaptured(t, "cluster", "down", "measure"); !strings.Contains(stderr, "name the cluster with --name") || code != 2 {
		t.Errorf("cluster down measure: exit %d, %q", code, stderr)
	}
}
