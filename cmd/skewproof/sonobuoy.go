package main

import (
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/runner/sonobuoy"
)

// pluginOut is where sonobuoy-plugin writes the plugin definition; tests
// replace it.
var pluginOut io.Writer = os.Stdout

func newSonobuoyPluginCmd() *cobra.Command {
	var o sonobuoy.PluginOptions
	c := &cobra.Command{
		Use:   "sonobuoy-plugin --image REF [--focus RE] [--skip RE] > skewproof.yaml",
		Short: "print a Sonobuoy plugin definition that runs the suites from a skewproof conformance image",
		Long: "Print a Sonobuoy plugin definition that runs the suites from a skewproof conformance image;\n" +
			"then: sonobuoy run --plugin skewproof.yaml (see docs/sonobuoy.md)",
		Args: noArgs("; give the image with --image"),
		RunE: func(*cobra.Command, []string) error {
			if o.Image == "" {
				return cli.Usagef("--image is required, e.g. skewproof sonobuoy-plugin --image registry.example.com/skewproof/conformance:v0.1.0")
			}
			if strings.ContainsAny(o.Image, " \t\n") {
				return cli.Usagef("--image %q contains white space", o.Image)
			}
			for _, f := range []struct{ name, re string }{{"--focus", o.Focus}, {"--skip", o.Skip}} {
				if _, err := regexp.Compile(f.re); err != nil {
					return cli.Usagef("%s: %v", f.name, err)
				}
			}
			b, err := sonobuoy.Plugin(o)
			if err != nil {
				return err
			}
			_, err = pluginOut.Write(b)
			return err
		},
	}
	c.Flags().StringVar(&o.Image, "image", "", "the skewproof conformance image, e.g. registry.example.com/skewproof/conformance:v0.1.0 (required)")
	c.Flags().StringVar(&o.Focus, "focus", "", "regular expression of the specs to run (E2E_FOCUS)")
	c.Flags().StringVar(&o.Skip, "skip", "", "regular expression of the specs to skip (E2E_SKIP)")
	return c
}
