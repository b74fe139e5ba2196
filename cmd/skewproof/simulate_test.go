package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/served"
	senv "github.com/skewproof/skewproof/suites/env"
)

// withServedCache points the served-versions cache at a temporary file
// holding the served list, so no test needs the network, and captures
// what the oracle commands print.
func withServedCache(t *testing.T) *bytes.Buffer {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(senv.CacheDir, dir)
	path, err := served.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir {
		t.Fatalf("cache path %s not under SKEWPROOF_CACHE_DIR", path)
	}
	versions := []string{"v1.29.6", "v1.30.14", "v1.31.14", "v1.32.13", "v1.33.13", "v1.34.0", "v1.34.4", "v1.35.4", "v1.36.1", "v1.36.3", "v1.37.2"}
	if err := served.WriteCache(path, versions, "test"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	old := oracleOut
	oracleOut = &buf
	t.Cleanup(func() { oracleOut = old })
	return &buf
}

func TestSimulateJSON(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"simulate", "--apiserver", "v1.37.2", "--kubelet", "1.34.4", "--format", "json", "--apparmor", "off"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var recs []struct {
		ID         string          `json:"id"`
		KEPRef     string          `json:"kepRef"`
		Component  string          `json:"component"`
		Expected   json.RawMessage `json:"expected"`
		KEPPlanned json.RawMessage `json:"kepPlanned"`
		Deviation  *bool           `json:"deviation"`
		Reason     string          `json:"reason"`
		Skip       string          `json:"skip"`
	}
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(recs) != len(skew.Rules()) {
		t.Fatalf("%d records, want %d", len(recs), len(skew.Rules()))
	}
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
		{"simulate", "--apiserver", "1.36.2"},                         // unknown (unserved) version
		{"simulate", "--apiserver", "1.38.0"},                         // no such minor served
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

func TestServedVersionError(t *testing.T) {
	withServedCache(t)
	_, err := cli.ServedVersion(t.Context(), "--apiserver", "1.36.2")
	if err == nil || !strings.Contains(err.Error(), "1.36.1, 1.36.3") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error = %v; want one line naming the served 1.36 releases", err)
	}
}
