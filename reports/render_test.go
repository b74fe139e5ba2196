package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served/servedtest"
)

func minor(t *testing.T, s string) release.Minor {
	t.Helper()
	m, err := release.ParseMinor(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteMatrixGitHub(t *testing.T) {
	cs, err := release.Matrix(servedtest.Sorted(), minor(t, "1.34"), minor(t, "1.37"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMatrix(&buf, "github", cs); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Include []map[string]string `json:"include"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("github matrix is not JSON: %v\n%s", err, buf.String())
	}
	if len(m.Include) != 4 || m.Include[3]["apiserver"] != "1.37.2" || m.Include[3]["kubelets"] != "1.34.4,1.35.4,1.36.3,1.37.2" {
		t.Errorf("github matrix = %s", buf.String())
	}
	if strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("github matrix must be one line (for $GITHUB_OUTPUT): %q", buf.String())
	}
	if err := WriteMatrix(&buf, "yaml", cs); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestWriteSimulationFormats(t *testing.T) {
	es, err := skew.Simulate(release.MustParseVersion("1.37.2"), release.MustParseVersion("1.34.4"), skew.DefaultHost)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSimulation(&buf, "json", es, ""); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "kepRef", "component", "expected", "kepPlanned", "deviation", "reason"} {
		if _, ok := recs[0][k]; !ok {
			t.Errorf("JSON record lacks %q", k)
		}
	}
	if _, ok := recs[0]["deviation"].(bool); !ok {
		t.Error("deviation must be a JSON bool")
	}
	buf.Reset()
	if err := WriteSimulation(&buf, "markdown", es, "skewproof simulate --apiserver 1.37.2 --kubelet 1.34.4 --format markdown"); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, frag := range []string{"Reproduce with `skewproof simulate --apiserver 1.37.2", "| `apparmor/failure/row-5` | kubelet |", "## Deviations"} {
		if !strings.Contains(md, frag) {
			t.Errorf("markdown lacks %q", frag)
		}
	}
	if err := WriteSimulation(&buf, "yaml", es, ""); err == nil {
		t.Error("unknown format accepted")
	}
}
