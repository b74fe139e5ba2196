package sonobuoy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// progressTimeout bounds one update; progress is advisory, so a slow or absent
// worker must not hold up the suites.
const progressTimeout = 5 * time.Second

// Progress sends progress updates to the sonobuoy-worker sidecar, which listens
// on localhost:$SONOBUOY_PROGRESS_PORT at /progress and relays each request
// body unchanged to the aggregator (pkg/worker/worker.go: localProgressURLPath,
// RelayProgressUpdates, relayProgress). `sonobuoy status --json` shows the
// latest update of each plugin.
//
// A nil *Progress is valid: its Update does nothing.
type Progress struct {
	url    string
	err    error // a bad SONOBUOY_PROGRESS_PORT, reported by each Update
	client *http.Client
}

// progressUpdate has the JSON names of Sonobuoy's plugin.ProgressUpdate
// (pkg/plugin/interface.go). The aggregator sets name, node and timestamp
// itself from the request (pkg/plugin/aggregation/handler.go:
// progressFromRequest), so they are not sent.
type progressUpdate struct {
	Message   string   `json:"msg"`
	Total     int64    `json:"total"`
	Completed int64    `json:"completed"`
	Failures  []string `json:"failures,omitempty"`
}

// NewProgress returns a client for the worker's progress port, or nil when
// SONOBUOY_PROGRESS_PORT is unset (not running under Sonobuoy).
func NewProgress() *Progress {
	port := os.Getenv(EnvProgressPort)
	if port == "" {
		return nil
	}
	p := &Progress{client: &http.Client{Timeout: progressTimeout}}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		p.err = fmt.Errorf("sonobuoy progress: %s=%q is not a port", EnvProgressPort, port)
		return p
	}
	p.url = "http://localhost:" + port + "/progress"
	return p
}

// Update posts one progress update: msg (e.g. the last spec finished), the
// total number of specs, how many have completed, and the names of those that
// failed so far. Errors are for logging; a failed update changes nothing else.
func (p *Progress) Update(ctx context.Context, msg string, total, completed int, failures []string) error {
	if p == nil {
		return nil
	}
	if p.err != nil {
		return p.err
	}
	body, err := json.Marshal(progressUpdate{Message: msg, Total: int64(total), Completed: int64(completed), Failures: failures})
	if err != nil {
		return fmt.Errorf("sonobuoy progress: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, progressTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sonobuoy progress: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("sonobuoy progress: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("sonobuoy progress: POST %s: %s %s", p.url, resp.Status, bytes.TrimSpace(b))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}
