package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewproof/skewproof/internal/progress"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// fakeSuite is a suite binary for runProcesses. Its dry run lists two specs
// of the profiles suite: one that waits for the garbage collector and one
// that floods it. The process of the first prints its specs-done line
// (when $dir/marker says so), then takes 2 s to clean up, then writes
// rest.exited; the flood's process records whether rest.exited was there
// when it started. Each prints the result line of its spec.
// dryRunReport is the start of a fake suite's dry run: $report is the
// path of the Ginkgo JSON report it must write.
const dryRunReport = `report=
	prev=
	for a; do [ "$prev" = -ginkgo.json-report ] && report=$a; prev=$a; done
`

const fakeSuite = `#!/bin/sh
dir=$(dirname "$0")
case "$*" in
*-ginkgo.dry-run*)
	` + dryRunReport + `	cat >"$report" <<'JSON'
[{"SpecReports": [
 {"LeafNodeType": "It", "State": "passed", "ContainerHierarchyLabels": [["profiles"]], "LeafNodeLabels": ["profiles-node-status-per-node", "` + senv.LabelWaitsForGC + `"]},
 {"LeafNodeType": "It", "State": "passed", "ContainerHierarchyLabels": [["profiles"]], "LeafNodeLabels": ["profiles-node-status-scale", "` + senv.LabelFloodsGC + `"]},
 {"LeafNodeType": "It", "State": "skipped", "ContainerHierarchyLabels": [["seccomp"]], "LeafNodeLabels": ["seccomp-api-types"]}
]}]
JSON
	exit 0 ;;
*"!(` + senv.LabelFloodsGC + `"*)
	echo '` + senv.ResultLinePrefix + `{"id":"profiles/node-status/per-node","verdict":"pass"}'
	[ "$(cat "$dir/marker")" = yes ] && echo "  ` + senv.SpecsDoneLine + `"
	sleep 2
	touch "$dir/rest.exited" ;;
*` + senv.LabelFloodsGC + `*)
	if [ -e "$dir/rest.exited" ]; then echo after >"$dir/flood.started"; else echo before >"$dir/flood.started"; fi
	echo '` + senv.ResultLinePrefix + `{"id":"profiles/node-status/scale","verdict":"pass"}' ;;
esac
`

// A spec that floods the garbage collector starts once the specs of the
// process that waits for it are done, while its clean-up still runs; a
// process that never says so (an older suite binary, a crash) still lets
// it start when it ends. The processes are planned from the binary's dry
// run.
func TestGCFloodWaitsForSpecsOnly(t *testing.T) {
	for _, tc := range []struct{ marker, want string }{{"yes", "before"}, {"no", "after"}} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "e2e.test")
		if err := os.WriteFile(bin, []byte(fakeSuite), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "marker"), []byte(tc.marker), 0o644)
		var seen []string
		o := Options{SuiteBinary: bin, Suites: []string{"profiles"}, Parallel: true, Timeout: time.Minute, OnSpec: func(r reports.Result) { seen = append(seen, r.ID) }}
		var out bytes.Buffer
		suites, _, err := o.runProcesses(context.Background(), progress.New(&out), t.TempDir(), nil)
		if err != nil {
			t.Fatalf("marker %s: %v\n%s", tc.marker, err, out.String())
		}
		// The results come from the processes' result lines, the one
		// channel: each process's spec once.
		var ids []string
		for _, s := range suites {
			for _, r := range s.Results {
				ids = append(ids, r.ID)
			}
		}
		slices.Sort(ids)
		if len(suites) != 1 || !slices.Equal(ids, []string{"profiles/node-status/per-node", "profiles/node-status/scale"}) || len(seen) != 2 {
			t.Errorf("results %+v, progress %v", suites, seen)
		}
		got, err := os.ReadFile(filepath.Join(dir, "flood.started"))
		if err != nil || strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("specs-done line printed: %s; the flood started %q (%v), want %s the waiting process ended\n%s", tc.marker, got, err, tc.want, out.String())
		}
	}
}

// crashingSuite lists three seccomp specs in its dry run; its process
// reports the first, prints a line, then ends as $dir/end says: killed by
// SIGKILL ("kill"), exit 2 ("exit") or exit 0 ("quiet").
const crashingSuite = `#!/bin/sh
dir=$(dirname "$0")
case "$*" in
*-ginkgo.dry-run*)
	` + dryRunReport + `	cat >"$report" <<'JSON'
[{"SpecReports": [
 {"LeafNodeType": "It", "State": "passed", "LeafNodeText": "[seccomp/api/types] a", "ContainerHierarchyLabels": [["seccomp"]], "LeafNodeLabels": ["api"]},
 {"LeafNodeType": "It", "State": "passed", "LeafNodeText": "[seccomp/kubelet/enforce] b [node:w1 kubelet:v1.37.2]", "ContainerHierarchyLabels": [["seccomp"]], "LeafNodeLabels": ["node:w1"]},
 {"LeafNodeType": "It", "State": "passed", "LeafNodeText": "[seccomp/kubelet/localhost] c [node:w1 kubelet:v1.37.2]", "ContainerHierarchyLabels": [["seccomp"]], "LeafNodeLabels": ["node:w1"]},
 {"LeafNodeType": "It", "State": "skipped", "LeafNodeText": "[apparmor/api/x] d", "ContainerHierarchyLabels": [["apparmor"]], "LeafNodeLabels": ["api"]}
]}]
JSON
	exit 0 ;;
esac
echo '` + senv.ResultLinePrefix + `{"name":"[seccomp/api/types] a","id":"seccomp/api/types","verdict":"pass"}'
echo "STEP: waiting for the last container"
case "$(cat "$dir/end")" in
kill) kill -9 $$ ;;
exit) exit 2 ;;
esac
exit 0
`

// A process that exits non-zero because specs failed (Ginkgo's exit
// status 1) failed inside its specs; one that exits non-zero with every
// spec reported and none failed failed outside them.
func TestProcessErrorsOutsideTheSpecs(t *testing.T) {
	run := func(verdict string) error {
		dir := t.TempDir()
		bin := filepath.Join(dir, "e2e.test")
		script := `#!/bin/sh
case "$*" in
*-ginkgo.dry-run*)
	` + dryRunReport + `	echo '[{"SpecReports": [{"LeafNodeType": "It", "State": "passed", "LeafNodeText": "[seccomp/api/types] a", "ContainerHierarchyLabels": [["seccomp"]], "LeafNodeLabels": ["api"]}]}]' >"$report"
	exit 0 ;;
esac
echo '` + senv.ResultLinePrefix + `{"name":"[seccomp/api/types] a","id":"seccomp/api/types","verdict":"` + verdict + `"}'
exit 1
`
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		o := Options{Name: "c", SuiteBinary: bin, Suites: []string{"seccomp"}, Timeout: time.Minute, OnSpec: func(reports.Result) {}}
		_, _, err := o.runProcesses(context.Background(), progress.New(new(bytes.Buffer)), t.TempDir(), nil)
		return err
	}
	if err := run("fail"); err != nil {
		t.Errorf("a process whose spec failed: %v, want no failure outside the specs", err)
	}
	if err := run("pass"); err == nil || !strings.Contains(err.Error(), "seccomp/all: exit status 1") {
		t.Errorf("a process that exits 1 with its only spec passed: %v, want a failure outside the specs naming it", err)
	}
}

// Every spec the dry run planned reports or is a failure: a process
// killed (a timeout, the OOM killer, kill -9), one that exits non-zero
// and one that exits 0 without reporting all its specs leave failures
// naming the spec, how the process ended and its last lines.
func TestUnreportedSpecsFail(t *testing.T) {
	for _, tc := range []struct {
		end, says string
		parallel  bool
	}{{"kill", "signal: killed", false}, {"exit", "exit status 2", true}, {"quiet", "exit status 0 without reporting it", false}} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "e2e.test")
		if err := os.WriteFile(bin, []byte(crashingSuite), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "end"), []byte(tc.end), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Name: "c", SuiteBinary: bin, Suites: []string{"seccomp"}, Parallel: tc.parallel, Timeout: time.Minute, OnSpec: func(reports.Result) {}}
		var out bytes.Buffer
		suites, _, err := o.runProcesses(context.Background(), progress.New(&out), t.TempDir(), nil)
		// The unreported specs' failures say how a process ended; in
		// parallel the "api" process reported its one spec and then
		// exited 2: a failure outside its specs.
		if tc.parallel && (err == nil || !strings.Contains(err.Error(), "seccomp/api: exit status 2")) || !tc.parallel && err != nil {
			t.Errorf("%s: process error %v", tc.end, err)
		}
		if len(suites) != 1 {
			t.Fatalf("%s: suites %+v", tc.end, suites)
		}
		got := map[string]reports.Result{}
		for _, r := range suites[0].Results {
			got[r.ID] = r
		}
		if len(got) != 3 || got["seccomp/api/types"].Verdict != skew.Pass {
			t.Fatalf("%s: results %+v, want the reported pass and two failures", tc.end, suites[0].Results)
		}
		for _, id := range []string{"seccomp/kubelet/enforce", "seccomp/kubelet/localhost"} {
			r := got[id]
			if r.Verdict != skew.Fail || r.Node != "w1" || r.Reason != reports.UnreportedReason ||
				!strings.Contains(r.Failure, tc.says) || !strings.Contains(r.Failure, "STEP: waiting for the last container") {
				t.Errorf("%s: %s: %+v, want a failure saying %q with the log's last lines", tc.end, id, r, tc.says)
			}
		}
	}
}

// A suite process inherits nothing that could narrow it unseen: a
// SKEWPROOF_* variable left in the shell does not reach it; the plan, PATH
// and the Docker client's settings do.
func TestSuiteEnvInheritsNothingThatNarrows(t *testing.T) {
	t.Setenv(senv.Workers, "w1")
	t.Setenv(senv.ScaleNodes, "3")
	t.Setenv("DOCKER_HOST", "unix:///run/other.sock")
	env := suiteEnv([]string{senv.PlanFile + "=/tmp/plan.json"})
	for _, kv := range env {
		if strings.HasPrefix(kv, senv.Prefix) && kv != senv.PlanFile+"=/tmp/plan.json" {
			t.Errorf("the suite process inherits %s", kv)
		}
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "DOCKER_HOST=unix:///run/other.sock", senv.PlanFile + "=/tmp/plan.json"} {
		if !slices.Contains(env, want) {
			t.Errorf("the suite process's environment lacks %s: %q", want, env)
		}
	}
}
