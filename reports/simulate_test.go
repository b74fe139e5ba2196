package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

func TestHostFlagsRuntime(t *testing.T) {
	for _, c := range []struct {
		rt, want string
	}{
		{"containerd", ""},
		{"cri-o", " --runtime cri-o"},
		{"containerd/2.4.2+crun/1.21", " --runtime containerd/2.4.2+crun/1.21"},
		{"containerd+runc", " --runtime containerd+runc"},
	} {
		h, err := skew.ParseRuntime(c.rt)
		if err != nil {
			t.Fatal(err)
		}
		h.AppArmor, h.Seccomp = true, true
		if got := HostFlags(h); got != c.want {
			t.Errorf("HostFlags(%s) = %q, want %q", c.rt, got, c.want)
		}
	}
}

// TestSimulationListsRuntimeNotResearched: on a runtime no variant covers,
// every format says which rules are judged against the KEP alone; on the
// default host none is listed.
func TestSimulationListsRuntimeNotResearched(t *testing.T) {
	v := release.MustParseVersion("1.37.2")
	simulate := func(rt string, format Format) string {
		h, err := skew.ParseRuntime(rt)
		if err != nil {
			t.Fatal(err)
		}
		h.AppArmor, h.Seccomp = true, true
		es, err := skew.Simulate(v, v, h)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteSimulation(&b, format, es, "skewproof simulate"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := simulate("containerd/2.4.2+kata-runtime", "text")
	for _, w := range []string{
		"runtime not researched seccomp/kubelet/enforce: runtime containerd v2.4.2 with kata-runtime not researched",
		"runtime not researched seccomp/failure/row-3: ",
		"runtime not researched apparmor/create/empty-annotation: the RuntimeDefault AppArmor profile of runtime containerd v2.4.2 with kata-runtime is not researched",
		"[runtime not researched] RuntimeDefault container runs with Seccomp: 2",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text output lacks %q:\n%s", w, text)
		}
	}
	// containerd decides these before any OCI runtime runs.
	for _, id := range []string{"seccomp/failure/row-4", "apparmor/failure/row-3"} {
		if strings.Contains(text, "runtime not researched "+id+":") {
			t.Errorf("%s listed as not researched on containerd 2.4.2", id)
		}
	}
	md := simulate("containerd/2.4.2+kata-runtime", "markdown")
	if !strings.Contains(md, "\n## Runtime not researched\n\n- `seccomp/kubelet/enforce`: runtime containerd v2.4.2") {
		t.Errorf("markdown output lacks the section:\n%s", md)
	}
	var recs []struct {
		ID                   string `json:"id"`
		RuntimeNotResearched string `json:"runtimeNotResearched"`
		RuntimeSource        string `json:"runtimeSource"`
	}
	if err := json.Unmarshal([]byte(simulate("cri-o/1.34.0+youki", "json")), &recs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[r.ID] = r.RuntimeNotResearched
		if r.ID == "seccomp/failure/row-4" && !strings.Contains(r.RuntimeSource, "cri-o@v1.34.0") {
			t.Errorf("row 4 on CRI-O cites %q", r.RuntimeSource)
		}
	}
	if got["apparmor/failure/row-3"] == "" || got["seccomp/failure/row-4"] != "" {
		t.Errorf("json: runtime not researched %v", got)
	}
	for _, f := range []Format{Text, Markdown} {
		if out := simulate("containerd", f); strings.Contains(strings.ToLower(out), "runtime not researched") {
			t.Errorf("%s on the default host lists rules not researched:\n%s", f, out)
		}
	}
}
