package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/skewproof/skewproof/runner/sonobuoy"
)

// pluginOut is where sonobuoy-plugin writes the plugin definition; tests
// replace it.
var pluginOut io.Writer = os.Stdout

func init() {
	register(command{
		name:    "sonobuoy-plugin",
		summary: "print a Sonobuoy plugin definition that runs the suites from a skewproof conformance image",
		run:     runSonobuoyPlugin,
	})
}

func runSonobuoyPlugin(ctx context.Context, args []string) error {
	fs := newFlagSet("sonobuoy-plugin")
	image := fs.String("image", "", "the skewproof conformance image, e.g. registry.example.com/skewproof/conformance:v0.1.0 (required)")
	focus := fs.String("focus", "", "regular expression of the specs to run (E2E_FOCUS)")
	skip := fs.String("skip", "", "regular expression of the specs to skip (E2E_SKIP)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: skewproof sonobuoy-plugin --image REF [--focus RE] [--skip RE] > skewproof.yaml\n\nthen: sonobuoy run --plugin skewproof.yaml (see docs/sonobuoy.md)")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v; run 'skewproof sonobuoy-plugin -h'", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; give the image with --image", fs.Arg(0))
	}
	if *image == "" {
		return usagef("--image is required, e.g. skewproof sonobuoy-plugin --image registry.example.com/skewproof/conformance:v0.1.0")
	}
	if strings.ContainsAny(*image, " \t\n") {
		return usagef("--image %q contains white space", *image)
	}
	for _, f := range []struct{ name, re string }{{"--focus", *focus}, {"--skip", *skip}} {
		if _, err := regexp.Compile(f.re); err != nil {
			return usagef("%s: %v", f.name, err)
		}
	}
	b, err := sonobuoy.Plugin(sonobuoy.PluginOptions{Image: *image, Focus: *focus, Skip: *skip})
	if err != nil {
		return err
	}
	_, err = pluginOut.Write(b)
	return err
}
