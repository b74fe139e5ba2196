package main

import (
	"context"
	"errors"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/runner/incluster"
)

func TestRunUsageErrors(t *testing.T) {
	withServedCache(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "give --apiserver and --kubelets"},
		{[]string{"--kubeconfig", kc, "--apiserver", "1.37.2"}, "not both"},
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "absent")}, "--kubeconfig"},
		{[]string{"--apiserver", "1.37.2", "--kubelets", "1.30.14"}, "skew"},
		{[]string{"--apiserver", "1.37.x"}, "--apiserver"},
		{[]string{"--kubeconfig", kc, "--timeout", "0s"}, "--timeout"},
		{[]string{"--kubeconfig", kc, "extra"}, "unexpected argument"},
		{[]string{"--kubeconfig", kc, "--suite-binary", filepath.Join(t.TempDir(), "absent")}, "--suite-binary"},
		{[]string{"--kubeconfig", kc, "--suite-binary", kc, "--build-suites"}, "not both"},
		{[]string{"--apiserver", "1.37.2", "--feature-gates", "AppArmor=false"}, "no longer exists in v1.37.2"},
		{[]string{"--apiserver", "1.32.13", "--feature-gates", "AppArmor=false"}, "locked to true"},
		{[]string{"--kubeconfig", kc, "--feature-gates", "AppArmor=false"}, "keeps its own"},
	} {
		_, err := execute(context.Background(), append([]string{"run"}, c.args...))
		var ue cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %q: got %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}

// TestRunAndEntrypointShareFlags: 'skewproof run' takes every flag of
// E2E_EXTRA_ARGS, with the same usage and type, and their defaults differ
// only where runner.InClusterDefaults says so.
func TestRunAndEntrypointShareFlags(t *testing.T) {
	differ := map[string]bool{"name": true, "timeout": true}
	run := newRunCmd().Flags()
	var s runner.SharedFlags
	n := 0
	incluster.ExtraArgsFlags(&s).VisitAll(func(e *pflag.Flag) {
		n++
		c := run.Lookup(e.Name)
		switch {
		case c == nil:
			t.Errorf("skewproof run has no --%s", e.Name)
		case c.Usage != e.Usage:
			t.Errorf("--%s: usage of skewproof run %q, of %s %q", e.Name, c.Usage, sonobuoy.EnvExtraArgs, e.Usage)
		case c.Value.Type() != e.Value.Type():
			t.Errorf("--%s: type %s in skewproof run, %s in %s", e.Name, c.Value.Type(), e.Value.Type(), sonobuoy.EnvExtraArgs)
		case (c.DefValue != e.DefValue) != differ[e.Name]:
			t.Errorf("--%s: default %q in skewproof run, %q in %s; a difference must be on purpose (runner.InClusterDefaults)", e.Name, c.DefValue, e.DefValue, sonobuoy.EnvExtraArgs)
		}
	})
	if n != 9 {
		t.Errorf("%s has %d flags, want the 9 the entrypoint shares with skewproof run", sonobuoy.EnvExtraArgs, n)
	}
}
