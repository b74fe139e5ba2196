package clusters

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/internal/image"
)

// docker runs the Docker CLI and returns its trimmed standard output.
func docker(ctx context.Context, args ...string) (string, error) {
	return dockerIn(ctx, nil, args...)
}

func dockerIn(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
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
		return "", fmt.Errorf("docker %s: %v: %s", strings.Join(firstN(args, 3), " "), err, command.Tail(msg, 15))
	}
	return strings.TrimSpace(out.String()), nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// imageExists reports whether the local Docker daemon has ref.
func imageExists(ctx context.Context, ref string) bool {
	_, err := docker(ctx, "image", "inspect", "--format", "{{.Id}}", ref)
	return err == nil
}

// imageArchitecture is the architecture of a local Docker image, or "".
func imageArchitecture(ctx context.Context, ref string) string {
	arch, _ := docker(ctx, "image", "inspect", "--format", "{{.Architecture}}", ref)
	return arch
}

// dockerLoad streams images into the Docker daemon.
func dockerLoad(ctx context.Context, images ...image.Image) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(image.Write(pw, images...)) }()
	_, err := dockerIn(ctx, pr, "load", "-q")
	_ = pr.Close()
	return err
}
