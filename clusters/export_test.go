package clusters

import (
	"github.com/skewproof/skewproof/clusters/internal/command"
	"github.com/skewproof/skewproof/clusters/internal/nodeimage"
)

// What the tests of package clusters_test (integration_test.go,
// containerd2_integration_test.go: they import the runner, which imports
// clusters) use of the package beyond its surface.
const (
	ControllerManagerQPS = controllerManagerQPS
	BuildContainerPrefix = nodeimage.BuildContainerPrefix
	CRIContainerd2       = nodeimage.CRIContainerd2
)

// Docker runs the Docker CLI and returns its trimmed standard output.
var Docker = command.Docker
