package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		{"upgrade-1.33.13-1.37.2.md", []string{"simulate", "--upgrade", "1.33.13", "1.37.2", "--format", "markdown"}, true},
		{"deviations.md", []string{"simulate", "--deviations", "1.29..1.37", "--format", "markdown"}, false},
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			out := withServedCache(t)
			if code := run(c.args); code != 0 {
				t.Fatalf("exit %d", code)
			}
			page, err := os.ReadFile(filepath.Join("..", "..", "docs", "oracle", c.page))
			if err != nil {
				t.Fatal(err)
			}
			if c.whole && string(page) != out.String() || !c.whole && !strings.Contains(string(page), out.String()) {
				t.Errorf("docs/oracle/%s is stale; regenerate it with: go run ./cmd/skewproof %s", c.page, strings.Join(c.args, " "))
			}
		})
	}
}
