package nodeimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The kube-proxy image's iptables wrapper runs the nf_tables commands when
// the kernel takes an nf_tables chain and the legacy ones otherwise, and
// keeps its decision.
func TestIptablesModeWrapper(t *testing.T) {
	for _, tc := range []struct {
		nft  bool // does the fake iptables-nft create chains?
		want string
	}{{true, "nft"}, {false, "legacy"}} {
		dir := t.TempDir()
		script := strings.ReplaceAll(iptablesModeWrapper, "/usr/sbin/", dir+"/")
		script = strings.ReplaceAll(script, "/tmp/.skewproof-iptables-mode", dir+"/mode")
		write := func(name, body string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write("wrapper", script)
		rc := "exit 1"
		if tc.nft {
			rc = "exit 0"
		}
		write("iptables-nft", `case "$*" in *-N*|*-X*) `+rc+` ;; esac; echo "iptables-nft $*"`)
		for _, mode := range []string{"nft", "legacy"} {
			write("ip6tables-"+mode+"-save", `echo "ip6tables-`+mode+`-save $*"`)
		}
		link := filepath.Join(dir, "ip6tables-save")
		if err := os.Symlink("wrapper", link); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			out, err := exec.Command(link, "-t", "nat").CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got, want := strings.TrimSpace(string(out)), "ip6tables-"+tc.want+"-save -t nat"; got != want {
				t.Errorf("nf_tables=%v, call %d: ran %q, want %q", tc.nft, i, got, want)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "mode")); strings.TrimSpace(string(b)) != tc.want {
			t.Errorf("nf_tables=%v: remembered mode %q, want %q", tc.nft, b, tc.want)
		}
	}
}
