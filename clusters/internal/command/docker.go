package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/skewproof/skewproof/internal/image"
	"github.com/skewproof/skewproof/internal/progress"
)

// Host runs the cluster code's Docker commands on this host and reports
// its steps: what clusters.Provider holds (as kind's Provider holds its
// internal provider and logger), handed down to the builders. The zero
// Host runs the Docker CLI on PATH and reports nothing; a test gives CLI a
// fake.
type Host struct {
	// Progress is where the steps are reported (nil: nowhere).
	Progress *progress.Progress
	// CLI runs the Docker CLI (nil: DockerCLI).
	CLI func(ctx context.Context, stdin io.Reader, args ...string) (string, error)
}

// DockerIn runs the Docker CLI with stdin as its standard input and returns
// its trimmed standard output.
func (h Host) DockerIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	if h.CLI != nil {
		return h.CLI(ctx, stdin, args...)
	}
	return DockerCLI(ctx, stdin, args...)
}

// Docker is DockerIn without standard input.
func (h Host) Docker(ctx context.Context, args ...string) (string, error) {
	return h.DockerIn(ctx, nil, args...)
}

// DockerCLI runs the docker command on PATH with stdin as its standard
// input and returns its trimmed standard output; the error holds the last
// lines of what it printed.
func DockerCLI(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	cmd.Stdin = stdin
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return "", fmt.Errorf("docker %s: %v: %s", strings.Join(firstN(args, 3), " "), err, Tail(msg, 15))
	}
	return strings.TrimSpace(out.String()), nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// ImageExists reports whether the local Docker daemon has ref.
func (h Host) ImageExists(ctx context.Context, ref string) bool {
	_, err := h.Docker(ctx, "image", "inspect", "--format", "{{.Id}}", ref)
	return err == nil
}

// ImageArchitecture is the architecture of a local Docker image, or "".
func (h Host) ImageArchitecture(ctx context.Context, ref string) string {
	arch, _ := h.Docker(ctx, "image", "inspect", "--format", "{{.Architecture}}", ref)
	return arch
}

// DockerLoad streams images into the Docker daemon.
func (h Host) DockerLoad(ctx context.Context, images ...image.Image) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(image.Write(pw, images...)) }()
	_, err := h.DockerIn(ctx, pr, "load", "-q")
	_ = pr.Close()
	return err
}

// DockerUnavailableError is the one-line error for a Docker daemon that does
// not answer.
func DockerUnavailableError(err error) error {
	return fmt.Errorf("the Docker daemon is not reachable (%s); start it, e.g. 'sudo hack/setup-host.sh'", ErrSummary(err.Error()))
}

// ErrSummary is the gist of an error message: its last ": " part when that
// says something, on one line.
func ErrSummary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, ": "); i > 0 && len(s)-i > 10 {
		s = s[i+2:]
	}
	if i := strings.Index(s, "\n"); i >= 0 {
		s = s[:i]
	}
	return s
}
