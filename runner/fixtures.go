package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/skewproof/skewproof/profiles/agentimage"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/internal/progress"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/skew"
)

// agentImage is the node agent image: Options.AgentImage, or one built from
// the static skewproof binary and loaded into local nodes.
func (o Options) agentImage(ctx context.Context, p *progress.Progress, prov *clusters.Provider, nodes []string, access nodeaccess.Access) (agentimage.Image, error) {
	if o.AgentImage != "" {
		return agentimage.Image{Ref: o.AgentImage, Note: o.AgentImageNote}, nil
	}
	if access != nodeaccess.Docker && !allLocal(ctx, prov, nodes) {
		return agentimage.Image{}, fmt.Errorf("the nodes are not local containers: pass --agent-image with a skewproof agent image present on every node (see docs/vendor.md)")
	}
	var img agentimage.Image
	err := p.Timed(fmt.Sprintf("loading the agent image into %d nodes", len(nodes)), func() (err error) {
		img, err = agentimage.Load(ctx, o.AgentBinary, nodes)
		if err != nil {
			return fmt.Errorf("%w (the skewproof binary must be static: build it with 'make build'); or pass --agent-image", err)
		}
		return nil
	})
	if img.Note != "" {
		p.Step("warning: %s; nodes with AppArmor will report Failed for AppArmorProfiles", img.Note)
	}
	return img, err
}

// installed is what installFixtures did: how to remove it, whether
// AppArmor profiles load on each node (the agent reports Unsupported on a
// node without AppArmor; nil when the AppArmor suite does not run) and the
// kernel facts the agent read on each node.
type installed struct {
	remove   func() error
	appArmor map[string]bool
	host     map[string]skew.HostFacts
}

// appArmorSetUp checks the agent's report of the AppArmor fixtures
// (loaded, per node) against the kernel facts it read on each node (host):
// a node whose kernel has AppArmor and did not load them is a failure of
// skewproof's set-up, with the agent's word, never "host has no AppArmor"
// (the plan's host facts would say so, and every AppArmor spec would skip
// there). Only a kernel without AppArmor is a host fact.
func appArmorSetUp(host map[string]skew.HostFacts, loaded map[string]bool) error {
	var bad []string
	for _, n := range slices.Sorted(maps.Keys(loaded)) {
		if h, ok := host[n]; ok && h.AppArmor && !loaded[n] {
			bad = append(bad, n)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("skewproof's set-up failed: the kernel of node(s) %v has AppArmor (the agent's host facts) but the agent did not load the AppArmor fixtures there (it reported them Unsupported): see the events of the fixtures namespace %s", bad, profiles.FixturesNamespace)
	}
	return nil
}

// installFixtures deploys the agent of the fixtures namespace, installs the
// seccomp fixtures and, with appArmor (a suite declares
// senv.FixtureAppArmorProfiles), the AppArmor ones,
// and asks the agent for each node's kernel facts. The removal takes the
// CRDs too when they were not there before.
func (o Options) installFixtures(ctx context.Context, p *progress.Progress, kubeconfig, image string, nodes int, exclude []string, appArmor bool) (f installed, err error) {
	c, err := profiles.Connect(kubeconfig, profiles.FixturesNamespace)
	if err != nil {
		return f, err
	}
	hadCRDs, err := c.CRDsInstalled(ctx)
	if err != nil {
		return f, fmt.Errorf("looking for the profile CRDs: %w", err)
	}
	f.remove = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		what := "removing the fixture profiles and their agent"
		if !hadCRDs {
			what += " (and the CRDs this run added)"
		}
		return p.Timed(what, func() error { return c.Teardown(ctx, !hadCRDs) })
	}
	timeout := 3 * time.Minute
	if len(o.Up.AppArmorNodes) > 0 || clusters.AppArmorNodeRunning(o.Name) {
		// The agent starts and syncs slowly on a User-Mode Linux node.
		timeout = 10 * time.Minute
	}
	err = p.Timed(fmt.Sprintf("installing %d seccomp profiles through the agent on %d nodes", len(profiles.Seccomp()), nodes), func() error {
		_, err := profiles.InstallFixtures(ctx, c, image, exclude, timeout)
		return err
	})
	if err != nil {
		return f, err
	}
	err = p.Timed(fmt.Sprintf("reading the kernel facts of %d nodes from their agents", nodes), func() (err error) {
		f.host, err = c.HostFacts(ctx)
		return err
	})
	if err != nil || !appArmor {
		return f, err
	}
	err = p.Timed(fmt.Sprintf("installing %d AppArmor profiles through the agent on %d nodes", len(profiles.AppArmor()), nodes), func() (err error) {
		if f.appArmor, err = profiles.InstallAppArmorFixtures(ctx, c, timeout); err != nil {
			return fmt.Errorf("skewproof's set-up failed: %w", err)
		}
		return appArmorSetUp(f.host, f.appArmor)
	})
	if err == nil {
		var on []string
		for n, l := range f.appArmor {
			if l {
				on = append(on, n)
			}
		}
		sort.Strings(on)
		p.Step("nodes with AppArmor (profiles loaded): %d of %d %v", len(on), len(f.appArmor), on)
	}
	return f, err
}
