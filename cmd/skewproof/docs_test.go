package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// update rewrites the golden files (docs/oracle/*) instead of comparing:
// go test ./cmd/skewproof -run TestOracleDocsAreCurrent -update
var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// TestOracleDocsAreCurrent checks that the pages in docs/oracle are what the
// commands they name print today.
func TestOracleDocsAreCurrent(t *testing.T) {
	cases := []struct {
		page  string
		args  []string
		whole bool
	}{
		{"simulate-1.33.13-1.33.13.md", []string{"simulate", "--apiserver", "1.33.13", "--kubelet", "1.33.13", "--format", "markdown"}, true},
		{"simulate-1.34.4-1.31.14.md", []string{"simulate", "--apiserver", "1.34.4", "--kubelet", "1.31.14", "--format", "markdown"}, true},
		{"simulate-1.37.2-1.34.4.md", []string{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.34.4", "--format", "markdown"}, true},
		{"simulate-1.37.2-1.34.4-cri-o.md", []string{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.34.4", "--runtime", "cri-o/1.34.0+crun/1.21", "--format", "markdown"}, true},
		{"simulate-1.37.2-1.34.4-kata-runtime.md", []string{"simulate", "--apiserver", "1.37.2", "--kubelet", "1.34.4", "--runtime", "containerd/2.4.2+kata-runtime", "--format", "markdown"}, true},
		{"simulate-1.26.15-1.24.17.md", []string{"simulate", "--apiserver", "1.26.15", "--kubelet", "1.24.17", "--format", "markdown"}, true},
		{"simulate-1.30.14-1.29.15.md", []string{"simulate", "--apiserver", "1.30.14", "--kubelet", "1.29.15", "--format", "markdown"}, true},
		{"upgrade-1.26.15-1.27.16.md", []string{"simulate", "--upgrade", "1.26.15", "1.27.16", "--format", "markdown"}, true},
		{"upgrade-1.33.13-1.37.2.md", []string{"simulate", "--upgrade", "1.33.13", "1.37.2", "--format", "markdown"}, true},
		{"deviations.md", []string{"simulate", "--deviations", "1.19..1.37", "--format", "markdown"}, false},
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			out := withServedCache(t)
			if code := run(c.args); code != 0 {
				t.Fatalf("exit %d", code)
			}
			path := filepath.Join("..", "..", "docs", "oracle", c.page)
			page, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := out.String()
			if !c.whole {
				// The page keeps its written findings above the generated
				// part, which begins with the output's first line.
				marker, _, _ := strings.Cut(want, "\n")
				head, _, ok := strings.Cut(string(page), marker+"\n")
				if !ok {
					t.Fatalf("docs/oracle/%s lacks the line %q that begins its generated part", c.page, marker)
				}
				want = head + want
			}
			if *update {
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if string(page) != want {
				t.Errorf("docs/oracle/%s is stale; regenerate it: go test ./cmd/skewproof -run TestOracleDocsAreCurrent -update (it prints go run ./cmd/skewproof %s)", c.page, strings.Join(c.args, " "))
			}
		})
	}
}

// TestOracleReadmeListsSourcesRead: docs/oracle/README.md names, for every
// rule, the releases whose sources were read for it.
func TestOracleReadmeListsSourcesRead(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "oracle", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range skew.Rules() {
		if !strings.Contains(string(b), r.Read.List()) {
			t.Errorf("docs/oracle/README.md does not list the releases read for %s: %s", r.ID, r.Read.List())
		}
	}
}
