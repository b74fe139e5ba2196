package clusters

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// scriptedDocker answers the Docker commands a Provider runs from a table
// (the first words of a command to its output) and records each command.
type scriptedDocker struct {
	answers map[string]string
	down    bool
	calls   []string
}

func (f *scriptedDocker) cli(_ context.Context, _ io.Reader, args ...string) (string, error) {
	cmd := strings.Join(args, " ")
	f.calls = append(f.calls, cmd)
	if f.down {
		return "", errors.New("docker version: exit status 1: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	}
	for prefix, out := range f.answers {
		if strings.HasPrefix(cmd, prefix) {
			return out, nil
		}
	}
	return "", errors.New("docker " + cmd + ": exit status 1: no such object")
}

// The Provider runs the Docker it holds: List keeps the kind clusters on
// a skewproof network and leaves out another tool's.
func TestProviderListsThroughItsDocker(t *testing.T) {
	f := &scriptedDocker{answers: map[string]string{
		"version": "20.10.24",
		"ps -a --filter label=io.x-k8s.kind.cluster": "alpha skewproof-alpha\nalpha skewproof-alpha\nbeta kind\ngamma skewproof-gamma",
	}}
	got, err := NewProviderWithCLI(f.cli).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "alpha") || !slices.Contains(got, "gamma") || slices.Contains(got, "beta") {
		t.Errorf("List = %v, want alpha and gamma (on skewproof networks), not beta (kind's own network)", got)
	}
	if len(f.calls) != 2 {
		t.Errorf("List ran %v, want docker version and docker ps", f.calls)
	}
}

// A Docker daemon that does not answer is one line with the remedy, for
// List and for Preflight alike.
func TestProviderSaysWhenItsDockerIsDown(t *testing.T) {
	f := &scriptedDocker{down: true}
	p := NewProviderWithCLI(f.cli)
	if _, err := p.List(context.Background()); err == nil || !strings.Contains(err.Error(), "start it") || strings.Contains(err.Error(), "\n") {
		t.Errorf("List with the daemon down: %v; want one line with the remedy", err)
	}
	r := p.Preflight(context.Background())
	var daemon *Check
	for i := range r.Checks {
		if r.Checks[i].Name == "docker daemon" || r.Checks[i].Name == "docker client" {
			daemon = &r.Checks[i]
		}
	}
	if daemon == nil || daemon.Status != checkFail || r.CanRunClusters() {
		t.Errorf("Preflight with the daemon down: %+v; want the Docker check failed and no clusters", r.Checks)
	}
}

// IsLocalNode asks the Provider's Docker for the container.
func TestProviderIsLocalNodeAsksItsDocker(t *testing.T) {
	f := &scriptedDocker{answers: map[string]string{"inspect --type container --format {{.Name}} c1-worker": "/c1-worker"}}
	p := NewProviderWithCLI(f.cli)
	if !p.IsLocalNode(context.Background(), "c1-worker") || p.IsLocalNode(context.Background(), "elsewhere") {
		t.Errorf("IsLocalNode: want c1-worker local and elsewhere not; Docker saw %v", f.calls)
	}
}
