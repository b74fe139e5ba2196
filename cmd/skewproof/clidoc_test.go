package main

import (
	"bytes"
	"github.com/skewproof/skewproof/runner/sonobuoy"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/runner/incluster"
)

// cliReference is docs/cli.md: every command of the tree as cobra's
// Markdown generator writes it (its links point within the page), then the
// flags of the in-cluster entrypoint's E2E_EXTRA_ARGS.
func cliReference(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# skewproof command-line reference\n\n" +
		"Generated from the command tree (go test ./cmd/skewproof -run TestCLIReferenceIsCurrent -update):\n" +
		"edit the commands' help, not this page. The flags the in-cluster entrypoint takes in\n" +
		"E2E_EXTRA_ARGS are at the end ([E2E_EXTRA_ARGS](#e2e_extra_args)).\n\n")
	toAnchor := func(file string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", "-")
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		if err := doc.GenMarkdownCustom(c, &b, toAnchor); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
				walk(s)
			}
		}
	}
	walk(newRoot())
	var s runner.SharedFlags
	b.WriteString("## E2E_EXTRA_ARGS\n\n" +
		"The conformance image's entrypoint (`skewproof conformance-entrypoint`, which Hydrophone and\n" +
		"Sonobuoy run: [vendor.md](vendor.md), [sonobuoy.md](sonobuoy.md)) takes no arguments. It reads\n" +
		"`" + strings.Join([]string{sonobuoy.EnvFocus, sonobuoy.EnvSkip, sonobuoy.EnvExtraArgs, sonobuoy.EnvExtraGinkgoArgs, sonobuoy.EnvDryRun}, "`, `") + "`;\n" +
		"`" + sonobuoy.EnvExtraArgs + "` holds these flags of `skewproof run`, with the entrypoint's defaults\n" +
		"(one dash or two, e.g. `" + sonobuoy.EnvExtraArgs + "=\"--suites=seccomp --timeout=2h\"`):\n\n" +
		"```\n" + incluster.ExtraArgsFlags(&s).FlagUsages() + "```\n")
	return b.String()
}

// TestCLIReferenceIsCurrent checks that docs/cli.md is what the command
// tree generates; -update rewrites it.
func TestCLIReferenceIsCurrent(t *testing.T) {
	want := cliReference(t)
	path := filepath.Join("..", "..", "docs", "cli.md")
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/cli.md is stale; regenerate it: go test ./cmd/skewproof -run TestCLIReferenceIsCurrent -update")
	}
}

// TestVendorDocListsExtraArgs: docs/vendor.md names every flag of
// E2E_EXTRA_ARGS, and no other, where it describes the entrypoint.
func TestVendorDocListsExtraArgs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "vendor.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`E2E_EXTRA_ARGS` \\(skewproof's own ([^)]*)\\)").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/vendor.md no longer lists the flags of E2E_EXTRA_ARGS as `E2E_EXTRA_ARGS` (skewproof's own `--a`, …)")
	}
	got := regexp.MustCompile("`(--[a-z-]+)`").FindAllStringSubmatch(string(m[1]), -1)
	var names []string
	for _, g := range got {
		names = append(names, g[1])
	}
	var s runner.SharedFlags
	var want []string
	incluster.ExtraArgsFlags(&s).VisitAll(func(f *pflag.Flag) { want = append(want, "--"+f.Name) })
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("docs/vendor.md lists the flags of E2E_EXTRA_ARGS as %v, the entrypoint takes %v", names, want)
	}
}
