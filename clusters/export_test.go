package clusters

import (
	"context"
	"io"

	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
)

// What the tests of package clusters_test (integration_test.go,
// containerd2_integration_test.go: they import the runner, which imports
// clusters) use of the package beyond its surface.
const (
	ControllerManagerQPS = controllerManagerQPS
	BuildContainerPrefix = nodeimage.BuildContainerPrefix
)

// NetworkName is the Docker network of a cluster.
var NetworkName = networkName

// Docker runs the Docker CLI and returns its trimmed standard output.
var Docker = command.Host{}.Docker

// NewProviderWithCLI returns a Provider whose Docker CLI is cli: a fake,
// for the tests of what the Provider asks Docker and makes of its answers.
func NewProviderWithCLI(cli func(ctx context.Context, stdin io.Reader, args ...string) (string, error)) *Provider {
	return &Provider{host: command.Host{CLI: cli}}
}
