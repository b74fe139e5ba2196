package sonobuoy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"
)

// sonobuoyProgressUpdate mirrors plugin.ProgressUpdate of
// github.com/vmware-tanzu/sonobuoy, pkg/plugin/interface.go, field for field.
type sonobuoyProgressUpdate struct {
	PluginName      string    `json:"name"`
	Node            string    `json:"node"`
	Timestamp       time.Time `json:"timestamp"`
	Message         string    `json:"msg"`
	Total           int64     `json:"total"`
	Completed       int64     `json:"completed"`
	Errors          []string  `json:"errors,omitempty"`
	Failures        []string  `json:"failures,omitempty"`
	AppendTotals    bool      `json:"appendtotals,omitempty"`
	AppendCompleted int64     `json:"appendcompleted,omitempty"`
	AppendFailing   []string  `json:"appendfailing,omitempty"`
}

type request struct {
	method, path, contentType string
	body                      []byte
}

// worker stands in for the sonobuoy-worker sidecar's progress listener and
// points SONOBUOY_PROGRESS_PORT at it.
func worker(t *testing.T, status int) <-chan request {
	t.Helper()
	got := make(chan request, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header.Get("Content-Type"), b}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvProgressPort, u.Port())
	return got
}

func TestProgressUpdate(t *testing.T) {
	got := worker(t, http.StatusOK)
	p := NewProgress()
	if p == nil {
		t.Fatal("NewProgress() = nil with SONOBUOY_PROGRESS_PORT set")
	}
	failures := []string{"[seccomp] pod with Localhost profile on kubelet 1.34"}
	if err := p.Update(context.Background(), "FAILED [seccomp] ...", 40, 7, failures); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.method != http.MethodPost || r.path != "/progress" || r.contentType != "application/json" {
		t.Errorf("request = %s %s (%s)", r.method, r.path, r.contentType)
	}

	// Sonobuoy's field names, and nothing else.
	var u sonobuoyProgressUpdate
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	if u.Message != "FAILED [seccomp] ..." || u.Total != 40 || u.Completed != 7 || !slices.Equal(u.Failures, failures) {
		t.Errorf("update = %+v", u)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"msg", "total", "completed", "failures"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("body %s lacks %q", r.body, k)
		}
	}
}

func TestProgressErrors(t *testing.T) {
	worker(t, http.StatusBadRequest)
	if err := NewProgress().Update(context.Background(), "m", 1, 0, nil); err == nil {
		t.Error("no error for a 400 response")
	}
	t.Setenv(EnvProgressPort, "http")
	if err := NewProgress().Update(context.Background(), "m", 1, 0, nil); err == nil {
		t.Error("no error for a bad SONOBUOY_PROGRESS_PORT")
	}
}

func TestProgressNoop(t *testing.T) {
	t.Setenv(EnvProgressPort, "")
	os.Unsetenv(EnvProgressPort)
	p := NewProgress()
	if p != nil {
		t.Fatalf("NewProgress() = %+v without SONOBUOY_PROGRESS_PORT", p)
	}
	if err := p.Update(context.Background(), "m", 1, 1, nil); err != nil {
		t.Errorf("nil Progress: %v", err)
	}
}

func TestResultsDirAndDetected(t *testing.T) {
	for _, k := range []string{EnvSonobuoy, EnvSonobuoyK8sVersion, EnvSonobuoyResultsDir, EnvSonobuoyConfigDir, EnvProgressPort, EnvResultsDir} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	if ResultsDir() != "/tmp/sonobuoy/results" || Detected() {
		t.Fatalf("clean env: ResultsDir() = %q, Detected() = %v", ResultsDir(), Detected())
	}
	t.Setenv(EnvResultsDir, "/r")
	if ResultsDir() != "/r" || Detected() {
		t.Errorf("RESULTS_DIR only: ResultsDir() = %q, Detected() = %v", ResultsDir(), Detected())
	}
	// What Sonobuoy sets (pkg/client/gen.go, applyAutoEnvVars).
	t.Setenv(EnvSonobuoyResultsDir, "/s")
	t.Setenv(EnvProgressPort, "8099")
	t.Setenv(EnvSonobuoy, "true")
	if ResultsDir() != "/s" || !Detected() {
		t.Errorf("under Sonobuoy: ResultsDir() = %q, Detected() = %v", ResultsDir(), Detected())
	}
	t.Setenv(EnvSonobuoy, "false")
	if Detected() {
		t.Error("SONOBUOY=false: Detected() = true")
	}
}
