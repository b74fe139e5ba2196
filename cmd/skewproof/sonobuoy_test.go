package main

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestSonobuoyPlugin(t *testing.T) {
	out := capture(t, &pluginOut)
	if code := run([]string{"sonobuoy-plugin", "--image", "registry.example.com/skewproof/conformance:v0.1.0", "--focus", `\[seccomp\]`, "--skip", "Serial"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct {
		SonobuoyConfig map[string]any   `json:"sonobuoy-config"`
		Spec           corev1.Container `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(out.Bytes(), &m); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if m.SonobuoyConfig["plugin-name"] != "skewproof" || m.Spec.Image != "registry.example.com/skewproof/conformance:v0.1.0" {
		t.Errorf("plugin = %s", out)
	}
	env := map[string]string{}
	for _, e := range m.Spec.Env {
		env[e.Name] = e.Value
	}
	if env["E2E_FOCUS"] != `\[seccomp\]` || env["E2E_SKIP"] != "Serial" {
		t.Errorf("env = %v", env)
	}
}

// The flags-free output is the package's golden file.
func TestSonobuoyPluginGolden(t *testing.T) {
	out := capture(t, &pluginOut)
	if code := run([]string{"sonobuoy-plugin", "--image", "registry.example.com/skewproof/conformance:v0.1.0"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "runner", "sonobuoy", "testdata", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("output differs from runner/sonobuoy/testdata/plugin.yaml:\n%s", out)
	}
}

func TestSonobuoyPluginBadInput(t *testing.T) {
	capture(t, &pluginOut)
	for _, args := range [][]string{
		{"sonobuoy-plugin"},
		{"sonobuoy-plugin", "--image", ""},
		{"sonobuoy-plugin", "--image", "a b"},
		{"sonobuoy-plugin", "--image", "img", "--focus", "("},
		{"sonobuoy-plugin", "--image", "img", "--skip", "[z-a]"},
		{"sonobuoy-plugin", "--image", "img", "extra"},
		{"sonobuoy-plugin", "--imag", "img"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"sonobuoy-plugin", "-h"}); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}
