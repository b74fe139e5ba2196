package profiles

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

// FixtureManifests are the seccomp fixtures as SeccompProfile manifests
// (named after their files: "deny-mkdir.json" → "deny-mkdir").
func FixtureManifests() []Manifest {
	ps := Seccomp()
	out := make([]Manifest, 0, len(ps))
	for _, p := range ps {
		out = append(out, Manifest{Kind: api.KindSeccompProfile, Name: strings.TrimSuffix(path.Base(p.Name), ".json"), Content: string(p.Content)})
	}
	return out
}

// AppArmorFixtureManifests are the AppArmor fixtures as AppArmorProfile
// manifests; on a node each is loaded under its own name.
func AppArmorFixtureManifests() []Manifest {
	var out []Manifest
	for _, p := range AppArmor() {
		out = append(out, Manifest{Kind: api.KindAppArmorProfile, Name: p.Name, Content: string(p.Content)})
	}
	return out
}

// InstallAppArmorFixtures installs the AppArmor fixtures through the agent
// of FixturesNamespace (deployed by InstallFixtures) and returns, per node,
// whether the node loaded them (true) or its kernel has no AppArmor (false:
// the agent reports Unsupported, a fact of the node). A node whose agent
// failed to load them is an error with the agent's message: a failure of
// skewproof's set-up, never "no AppArmor".
func InstallAppArmorFixtures(ctx context.Context, c *Cluster, timeout time.Duration) (map[string]bool, error) {
	reps, err := Install(ctx, c, AppArmorFixtureManifests(), nil, InstallOptions{Timeout: timeout, Settled: true})
	if err != nil {
		return nil, err
	}
	return appArmorNodes(reps)
}

// appArmorNodes reads the reports of the AppArmor fixtures: a node loaded
// them when every one is Installed there, has no AppArmor when they are
// Unsupported; anything else is the agent's failure.
func appArmorNodes(reps []NodeReport) (map[string]bool, error) {
	out := map[string]bool{}
	var failed []string
	for _, r := range reps {
		for _, s := range r.Nodes {
			loaded := s.Status == api.Installed
			if !loaded && s.Status != api.Unsupported {
				failed = append(failed, fmt.Sprintf("the agent on node %s did not load AppArmor profile %s: %s%s", s.Node, r.Manifest.Name, s.Status, msgSuffix(s.Message)))
			}
			if prev, seen := out[s.Node]; seen {
				loaded = loaded && prev
			}
			out[s.Node] = loaded
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return out, nil
}

// InstallFixtures deploys the agent (image present on every node) in
// FixturesNamespace and installs every seccomp fixture; it returns when
// every node with an agent pod has them all Installed.
func InstallFixtures(ctx context.Context, c *Cluster, image string, exclude []string, timeout time.Duration) ([]NodeReport, error) {
	if c.Namespace != FixturesNamespace {
		return nil, fmt.Errorf("the fixtures live in namespace %s, not %s", FixturesNamespace, c.Namespace)
	}
	if err := c.Deploy(ctx, agent.DeployOptions{Image: image, ExcludeNodes: exclude}, timeout); err != nil {
		return nil, fmt.Errorf("deploying the agent in %s: %w", c.Namespace, err)
	}
	return Install(ctx, c, FixtureManifests(), nil, InstallOptions{Timeout: timeout})
}

// CheckFixtures returns an error unless every seccomp fixture exists in
// FixturesNamespace with the aggregated status Installed.
func CheckFixtures(ctx context.Context, c *Cluster) error {
	var bad []string
	for _, m := range FixtureManifests() {
		p, _, err := status.GetProfile(ctx, c.Dynamic, m.Kind, c.Namespace, m.Name)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", m.Name, err))
		case p.Status.Status != api.Installed:
			bad = append(bad, fmt.Sprintf("%s is %q", m.Name, p.Status.Status))
		case p.LocalhostProfile() != Dir+"/"+m.Name+".json":
			bad = append(bad, fmt.Sprintf("%s is at %s, want %s", m.Name, p.LocalhostProfile(), Dir+"/"+m.Name+".json"))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("seccomp fixtures not installed in namespace %s (%s); install them with 'skewproof profiles deploy --namespace %s' and 'skewproof profiles install --namespace %s', or run through 'skewproof run'",
			c.Namespace, strings.Join(bad, "; "), FixturesNamespace, FixturesNamespace)
	}
	return nil
}
