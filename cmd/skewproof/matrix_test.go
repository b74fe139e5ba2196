package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMatrixGitHub(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"matrix", "--apiserver", "1.34..1.37", "--format", "github"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct {
		Include []struct {
			Apiserver string `json:"apiserver"`
			Kubelets  string `json:"kubelets"`
		} `json:"include"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, out.String())
	}
	if len(m.Include) != 4 || m.Include[0].Apiserver != "1.34.4" || m.Include[0].Kubelets != "1.31.14,1.32.13,1.33.13,1.34.4" {
		t.Errorf("matrix = %s", out.String())
	}
}

func TestMatrixText(t *testing.T) {
	out := withServedCache(t)
	if code := run([]string{"matrix", "--apiserver", "1.36"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "1.36.3") || !strings.Contains(out.String(), "1.33.13 1.34.4 1.35.4 1.36.3") {
		t.Errorf("text matrix = %s", out.String())
	}
}

func TestMatrixBadInput(t *testing.T) {
	withServedCache(t)
	for _, args := range [][]string{
		{"matrix", "--apiserver", "1.37..1.34"},
		{"matrix", "--apiserver", "1.34..1.38"},
		{"matrix", "--apiserver", "latest"},
		{"matrix"},
		{"matrix", "--apiserver", "1.34..1.37", "--format", "gitlab"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
