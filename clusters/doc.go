// Package clusters brings up and removes the kind clusters skewproof tests
// on: one control plane at the API server's version and one worker per
// kubelet version, each worker on the container runtime it names, from node
// images built offline (nothing is pulled), and, on a host whose kernel has
// no AppArmor, one more worker on a User-Mode Linux kernel that enforces it.
//
// Like kind's pkg/cluster, whose Go packages it drives, its surface is a
// Provider with options:
//
//   - NewProvider returns a Provider: the host it works on (the Docker CLI
//     its steps run, swappable in tests, and the progress.Progress they
//     report to), as kind's Provider holds its internal provider and logger.
//   - Provider.Up brings a cluster up as UpOptions describe it; Down, List,
//     ListOwned and NodeNames remove and find clusters (a name that is taken
//     is an ExistsError).
//   - UpOptions name each worker's runtime as a noderuntime.Runtime; package
//     clusters/noderuntime reads the --kubelets grammar (VERSION[@CRI][+OCI]).
//   - Provider.BuildNodeImage, PlanBuilds, ListImages, PruneImages and
//     PruneNodeImages build and tidy node images; Provider.LoadImageArchive
//     loads an image into a cluster's nodes (those IsLocalNode finds);
//     Provider.Preflight checks the host; Provider.AppArmorNodeKernel and
//     the functions AppArmorNodeReady, AppArmorNodeRunning,
//     SaveAppArmorNodeConsoles and AppArmorNodeName serve the User-Mode
//     Linux worker.
//
// Whether a cluster fits in the host's memory and disk is package
// clusters/capacity. The machinery is in this package's unexported code and
// in clusters/internal (the node-image build in clusters/internal/nodeimage,
// Go builds from the module proxy, the Docker CLI, the User-Mode Linux node),
// with the module's internal/image and internal/cache;
// docs/clusters/README.md describes how a node image is built.
package clusters
