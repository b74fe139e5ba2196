package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
)

// fakeSuite is a suite binary for runSuites: the profiles suite's main
// part prints its specs-done line (when $1 says so), then takes 2 s to
// clean up, then writes main.exited; the scale part records whether
// main.exited was there when it started. Both write an empty JUnit file.
const fakeSuite = `#!/bin/sh
dir=$(dirname "$0")
case "$*" in
*"!profiles-node-status-scale"*)
	[ "$(cat "$dir/marker")" = yes ] && echo "  ` + reports.SpecsDoneLine + `"
	sleep 2
	touch "$dir/main.exited" ;;
*profiles-node-status-scale*)
	if [ -e "$dir/main.exited" ]; then echo after >"$dir/scale.started"; else echo before >"$dir/scale.started"; fi ;;
esac
echo '<testsuites></testsuites>' >"$SKEWPROOF_JUNIT"
`

// The scale bench starts once the main part's specs are done, while its
// clean-up still runs; a process that never says so (an older suite
// binary, a crash) still lets it start when it ends.
func TestScaleBenchWaitsForSpecsOnly(t *testing.T) {
	for _, tc := range []struct{ marker, want string }{{"yes", "before"}, {"no", "after"}} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "e2e.test")
		if err := os.WriteFile(bin, []byte(fakeSuite), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "marker"), []byte(tc.marker), 0o644)
		o := Options{SuiteBinary: bin, Suites: []string{"profiles"}, Parallel: true, Timeout: time.Minute, OnSpec: func(reports.Result) {}}
		var out bytes.Buffer
		if _, _, err := o.runSuites(context.Background(), clusters.NewProgress(&out), t.TempDir(), []string{"w1"}, nil); err != nil {
			t.Fatalf("marker %s: %v\n%s", tc.marker, err, out.String())
		}
		got, err := os.ReadFile(filepath.Join(dir, "scale.started"))
		if err != nil || strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("specs-done line printed: %s; the scale bench started %q (%v), want %s the main part's process ended", tc.marker, got, err, tc.want)
		}
	}
}
