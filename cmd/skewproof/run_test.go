package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"--kubeconfig", kc, "--suites", ""}, "at least one suite"},
		{[]string{"--kubeconfig", kc, "--suites", "../x"}, "not a suite"},
		{[]string{"--kubeconfig", kc, "--suite-binary", filepath.Join(t.TempDir(), "absent")}, "--suite-binary"},
		{[]string{"--kubeconfig", kc, "--suite-binary", kc, "--build-suites"}, "not both"},
		{[]string{"--apiserver", "1.37.2", "--feature-gates", "AppArmor=false"}, "no longer exists in v1.37.2"},
		{[]string{"--apiserver", "1.32.13", "--feature-gates", "AppArmor=false"}, "locked to true"},
		{[]string{"--kubeconfig", kc, "--feature-gates", "AppArmor=false"}, "keeps its own"},
	} {
		_, err := execute(context.Background(), append([]string{"run"}, c.args...))
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %q: got %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}
