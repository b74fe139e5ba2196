package sonobuoy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/plugin.yaml from Plugin's output")

// sonobuoyManifest mirrors Sonobuoy's manifest.Manifest and
// manifest.SonobuoyConfig (github.com/vmware-tanzu/sonobuoy,
// pkg/plugin/manifest/manifest.go) key for key. The pod spec key is
// "podSpec", as in that file and in site/content/docs/main/plugins.md.
type sonobuoyManifest struct {
	SonobuoyConfig struct {
		Driver       string   `json:"driver"`
		PluginName   string   `json:"plugin-name"`
		SkipCleanup  bool     `json:"skip-cleanup,omitempty"`
		ResultFormat string   `json:"result-format,omitempty"`
		ResultFiles  []string `json:"result-files,omitempty"`
		Description  string   `json:"description,omitempty"`
		SourceURL    string   `json:"source-url,omitempty"`
		Order        int      `json:"order,omitempty"`
	} `json:"sonobuoy-config"`
	Spec         corev1.Container  `json:"spec"`
	ExtraVolumes []corev1.Volume   `json:"extra-volumes,omitempty"`
	PodSpec      *corev1.PodSpec   `json:"podSpec,omitempty"`
	ConfigMap    map[string]string `json:"config-map,omitempty"`
}

// parseStrict reads a plugin definition into sonobuoyManifest. Unknown keys
// fail yaml.UnmarshalStrict; a key that differs from a known one only in case
// (which encoding/json, under yaml.UnmarshalStrict, would take, but Sonobuoy's
// case-sensitive apimachinery decoder would drop) fails the round trip.
func parseStrict(b []byte) (sonobuoyManifest, error) {
	var m sonobuoyManifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		return m, err
	}
	in, err := yaml.YAMLToJSON(b)
	if err != nil {
		return m, err
	}
	out, err := json.Marshal(m)
	if err != nil {
		return m, err
	}
	var a, z any
	if err := json.Unmarshal(in, &a); err != nil {
		return m, err
	}
	if err := json.Unmarshal(out, &z); err != nil {
		return m, err
	}
	if !reflect.DeepEqual(a, z) {
		return m, fmt.Errorf("keys not kept by a round trip:\n in: %s\nout: %s", in, out)
	}
	return m, nil
}

// sonobuoyExample is Sonobuoy's own example plugin definition,
// cmd/sonobuoy/app/testdata/testPluginDir/plugin1.yaml (Apache-2.0).
const sonobuoyExample = `sonobuoy-config:
  driver: Job
  plugin-name: plugin1
  result-format: raw
spec:
  command:
  - ./run.sh
  image: foo/bar:v1
  name: plugin
  resources: {}
  volumeMounts:
  - mountPath: /tmp/results
    name: results
`

// TestMirrorIsStrict checks the checker: the mirror reads Sonobuoy's own
// example and rejects a misspelled key.
func TestMirrorIsStrict(t *testing.T) {
	if _, err := parseStrict([]byte(sonobuoyExample)); err != nil {
		t.Fatalf("Sonobuoy's example plugin does not parse: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(sonobuoyExample, "result-format", "result-fromat", 1),
		strings.Replace(sonobuoyExample, "volumeMounts", "volumemounts", 1),
		sonobuoyExample + "pod-spec: {}\n",
	} {
		if _, err := parseStrict([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

func TestPluginSchema(t *testing.T) {
	b, err := Plugin(PluginOptions{Image: "example.com/skewproof:v0", Focus: "seccomp", Skip: "Serial", ExtraArgs: "--x", SourceURL: "https://example.com/skewproof"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseStrict(b)
	if err != nil {
		t.Fatalf("not a Sonobuoy plugin definition: %v\n%s", err, b)
	}
	c := m.SonobuoyConfig
	if !slices.Contains([]string{"Job", "DaemonSet"}, c.Driver) {
		t.Errorf("driver = %q", c.Driver)
	}
	// pkg/client/results/processing.go: ResultFormatJUnit ... ResultFormatManual.
	if !slices.Contains([]string{"raw", "junit", "e2e", "gojson", "manual"}, c.ResultFormat) {
		t.Errorf("result-format = %q", c.ResultFormat)
	}
	if c.Driver != "Job" || c.PluginName != "skewproof" || c.ResultFormat != "junit" || c.Description == "" || c.SourceURL != "https://example.com/skewproof" {
		t.Errorf("sonobuoy-config = %+v", c)
	}

	s := m.Spec
	if s.Name != "plugin" || s.Image != "example.com/skewproof:v0" || s.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("name, image, pull policy = %q %q %q", s.Name, s.Image, s.ImagePullPolicy)
	}
	if !slices.Equal(s.Command, []string{"/usr/local/bin/skewproof", "conformance-entrypoint"}) {
		t.Errorf("command = %q", s.Command)
	}
	env := map[string]string{}
	for _, e := range s.Env {
		env[e.Name] = e.Value
	}
	want := map[string]string{"RESULTS_DIR": "/tmp/sonobuoy/results", "E2E_FOCUS": "seccomp", "E2E_SKIP": "Serial", "E2E_EXTRA_ARGS": "--x"}
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("env %s = %q (set: %v), want %q", k, got, ok, v)
		}
	}
	// The worker reads the done file from the "results" volume, which Sonobuoy
	// mounts in both containers (pkg/plugin/driver/job/job.go).
	var mounted []string
	for _, vm := range s.VolumeMounts {
		if vm.Name == "results" {
			mounted = append(mounted, vm.MountPath)
		}
	}
	if len(mounted) != 1 || mounted[0] != env["RESULTS_DIR"] {
		t.Errorf("results mounted at %q, RESULTS_DIR = %q", mounted, env["RESULTS_DIR"])
	}

	sc := s.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no securityContext")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot, sc.RunAsUser == nil || *sc.RunAsUser != 65534:
		t.Errorf("not run as uid 65534: %+v", sc)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities = %+v", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("seccompProfile = %+v", sc.SeccompProfile)
	}
}

func TestPluginGolden(t *testing.T) {
	b, err := Plugin(PluginOptions{Image: "registry.example.com/skewproof/conformance:v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "plugin.yaml")
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("Plugin output differs from %s (regenerate with go test ./runner/sonobuoy -run Golden -update):\n%s", golden, b)
	}
}

func TestPluginNeedsImage(t *testing.T) {
	if _, err := Plugin(PluginOptions{}); err == nil {
		t.Error("no error without an image")
	}
}
