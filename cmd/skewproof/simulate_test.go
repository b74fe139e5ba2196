package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/internal/cachedir"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/served"
)

// withServedCache points the served-versions cache at a temporary file
// holding the served list, so no test needs the network, and captures
// what the oracle commands print.
func withServedCache(t *testing.T) *bytes.Buffer {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(cachedir.Env, dir)
	path, err := served.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir {
		t.Fatalf("cache path %s not under SKEWPROOF_CACHE_DIR", path)
	}
	versions := []string{"v1.19.16", "v1.20.15", "v1.21.14", "v1.22.17", "v1.23.17", "v1.24.17", "v1.25.16", "v1.26.15", "v1.27.16", "v1.28.15", "v1.29.6", "v1.29.15", "v1.30.14", "v1.31.14", "v1.32.13", "v1.33.13", "v1.34.0", "v1.34.4", "v1.35.4", "v1.36.1", "v1.36.3", "v1.37.2"}
	if err := served.WriteCache(path, versions, "test"); err != nil {
		t.Fatal(err)
	}
	return capture(t, &oracleOut)
}

// capture points *w at a buffer for the length of the test and returns the
// buffer.
func capture(t *testing.T, w *io.Writer) *bytes.Buffer {
	var buf bytes.Buffer
	old := *w
	*w = &buf
	t.Cleanup(func() { *w = old })
	return &buf
}

// oneRecordPerRule decodes the JSON records simulate printed and fails t
// unless there is one per rule.
func oneRecordPerRule[R any](t *testing.T, out *bytes.Buffer) []R {
	t.Helper()
	var recs []R
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(recs) != len(skew.Rules()) {
		t.Fatalf("%d records, want %d", len(recs), len(skew.Rules()))
	}
	return recs
}

func TestSimulateJSON(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"simulate", "--apiserver", "v1.37.2", "--kubelet", "1.34.4", "--format", "json", "--apparmor", "off"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	recs := oneRecordPerRule[struct {
		ID         string          `json:"id"`
		KEPRef     string          `json:"kepRef"`
		Component  string          `json:"component"`
		Expected   json.RawMessage `json:"expected"`
		KEPPlanned json.RawMessage `json:"kepPlanned"`
		Deviation  *bool           `json:"deviation"`
		Reason     string          `json:"reason"`
		Skip       string          `json:"skip"`
	}](t, out)
	for _, r := range recs {
		if r.ID == "" || r.KEPRef == "" || (r.Component != "apiserver" && r.Component != "kubelet") || r.Deviation == nil || r.Reason == "" || len(r.Expected) == 0 || len(r.KEPPlanned) == 0 {
			t.Errorf("incomplete record %+v", r)
		}
		if r.ID == "apparmor/failure/row-5" && (!*r.Deviation || r.Skip != "") {
			t.Errorf("row-5 on a host without AppArmor with kubelet 1.34: %+v", r)
		}
		if r.ID == "apparmor/kubelet/enforce" && !strings.Contains(r.Skip, "no AppArmor") {
			t.Errorf("enforce must skip with --apparmor off: %+v", r)
		}
	}
}

func TestSimulateUpgradeMarkdown(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"simulate", "--upgrade", "1.33.13", "1.37.2", "--format", "markdown"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	md := out.String()
	for _, frag := range []string{"upgrade from v1.33.13 to v1.37.2", "`apparmor/create/field-to-annotation`", "skewproof simulate --upgrade 1.33.13 1.37.2 --format markdown"} {
		if !strings.Contains(md, frag) {
			t.Errorf("output lacks %q:\n%s", frag, md)
		}
	}
	if strings.Contains(md, "`seccomp/") {
		t.Error("seccomp does not change between 1.33 and 1.37")
	}
}

func TestSimulateBadInput(t *testing.T) {
	withServedCache(t)
	cases := [][]string{
		{"simulate", "--apiserver", "1.37"},                           // malformed
		{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.33.13"}, // skew beyond policy
		{"simulate", "--apiserver", "1.34.4", "--kubelet", "1.35.4"},  // kubelet newer
		{"simulate", "--kubelet", "1.34.4"},                           // missing --apiserver
		{"simulate", "--apiserver", "1.37.2", "--format", "yaml"},     // unknown format
		{"simulate", "--apiserver", "1.37.2", "--apparmor", "maybe"},  // bad host fact
		{"simulate", "--upgrade", "1.37.2", "1.33.13"},                // reversed upgrade
		{"simulate", "--upgrade", "1.33.13"},                          // missing TO
		{"simulate", "--apiserver", "1.37.2", "extra"},                // stray argument
		{"simulate", "--no-such-flag"},                                // unknown flag
	}
	for _, args := range cases {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// An unserved release is answered all the same, with a one-line note that
// names the served releases of its minor.
func TestReleaseVersionNote(t *testing.T) {
	withServedCache(t)
	v, note, err := cli.ReleaseVersion(t.Context(), "--apiserver", "1.36.2")
	if err != nil || v.String() != "1.36.2" {
		t.Fatalf("1.36.2: %v, %v", v, err)
	}
	if !strings.Contains(note, "1.36.1, 1.36.3") || !strings.Contains(note, "not served") || strings.Contains(note, "\n") {
		t.Errorf("note = %q; want one line naming the served 1.36 releases", note)
	}
	if _, note, err := cli.ReleaseVersion(t.Context(), "--apiserver", "1.36.3"); err != nil || note != "" {
		t.Errorf("1.36.3 is served: note %q, error %v", note, err)
	}
	if _, _, err := cli.ReleaseVersion(t.Context(), "--apiserver", "1.36"); err == nil {
		t.Error("malformed version accepted")
	}
}

// simulate answers for releases outside the sources read (a future
// kube-apiserver, an old cluster) with skip, "not researched", for each rule
// outside them, never pass or deviation; inside them it answers as before.
func TestSimulateNotResearched(t *testing.T) {
	cases := []struct {
		apiserver, kubelet string
		skips              func(id, component string) string // the version outside the reading, or ""
	}{
		{"1.38.0", "1.37.2", func(id, c string) string { return "kube-apiserver v1.38.0" }},
		{"1.23.17", "1.23.17", func(id, c string) string {
			switch {
			case strings.HasPrefix(id, "seccomp/"):
				return "" // seccomp was read from v1.19
			case c == "kubelet":
				return "kubelet v1.23.17"
			}
			return "kube-apiserver v1.23.17"
		}},
		{"1.37.2", "1.34.4", func(id, c string) string { return "" }},
	}
	for _, c := range cases {
		out := withServedCache(t)
		if code := run([]string{"simulate", "--apiserver", c.apiserver, "--kubelet", c.kubelet, "--format", "json"}); code != 0 {
			t.Fatalf("%s/%s: exit %d", c.apiserver, c.kubelet, code)
		}
		recs := oneRecordPerRule[struct {
			ID        string `json:"id"`
			Component string `json:"component"`
			Phase     string `json:"upstreamPhase"`
			Deviation bool   `json:"deviation"`
			Skip      string `json:"skip"`
		}](t, out)
		for _, r := range recs {
			outside := c.skips(r.ID, r.Component)
			if outside == "" {
				if strings.Contains(r.Skip, "not researched") {
					t.Errorf("%s/%s %s: skip %q inside the sources read", c.apiserver, c.kubelet, r.ID, r.Skip)
				}
				continue
			}
			if !strings.Contains(r.Skip, "not researched at "+outside+" (sources read: v") || r.Deviation || r.Phase != "not researched" {
				t.Errorf("%s/%s %s: skip %q, deviation %v, phase %q; want skip, not researched at %s", c.apiserver, c.kubelet, r.ID, r.Skip, r.Deviation, r.Phase, outside)
			}
		}
	}
}
