package reports

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

var updateObserved = flag.Bool("update", false, "rewrite docs/oracle/observed.md")

const observedDoc = "../docs/oracle/observed.md"

// TestObservedDocIsCurrent: docs/oracle/observed.md is what the ledger and
// the rules give now.
func TestObservedDocIsCurrent(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteObserved(&buf); err != nil {
		t.Fatal(err)
	}
	if *updateObserved {
		if err := os.WriteFile(observedDoc, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(observedDoc)
	if err != nil || !bytes.Equal(b, buf.Bytes()) {
		t.Fatalf("%s is stale (%v); regenerate it: go test ./reports -run TestObservedDocIsCurrent -update", observedDoc, err)
	}
}

// A simulation whose answers a real cluster observed says so, in every
// format; one without observations has no such column.
func TestSimulationMarksObserved(t *testing.T) {
	e := skew.Expectation{ID: "seccomp/create/field-to-annotation", Component: skew.Apiserver, Apiserver: "1.26.15", Kubelet: "1.24.17",
		Observed: []skew.ObservedVerdict{{ID: "seccomp/create/field-to-annotation", Apiserver: "1.26.15", Kubelet: "1.24.17", Runtime: "containerd+runc", Verdict: skew.Pass, Run: "r"}}}
	plain := e
	plain.ID, plain.Observed = "seccomp/create/none", nil
	for _, f := range []Format{Text, Markdown, JSON} {
		var buf bytes.Buffer
		if err := WriteSimulation(&buf, f, []skew.Expectation{e, plain}, ""); err != nil {
			t.Fatal(err)
		}
		want := "1.26.15/1.24.17"
		if f == JSON {
			want = `"observed": [`
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s: no observed cluster in\n%s", f, buf.String())
		}
		buf.Reset()
		if err := WriteSimulation(&buf, f, []skew.Expectation{plain}, ""); err != nil {
			t.Fatal(err)
		}
		if f != JSON && strings.Contains(strings.ToLower(buf.String()), "observed") {
			t.Errorf("%s: a simulation without observations mentions them:\n%s", f, buf.String())
		}
	}
}
