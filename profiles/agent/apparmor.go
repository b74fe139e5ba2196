// AppArmor on the node: whether the kernel has it, loading profiles with
// apparmor_parser (replace semantics, no cache), the record of each loaded
// profile's text under the namespace's directory so that it can be unloaded
// once its object is gone (across restarts too), and the kernel's list of
// loaded profiles in securityfs.

package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/profiles/api"
)

// DefaultAppArmorEnabledFile says whether the kernel has AppArmor enabled
// ("Y"); it is absent when the kernel has no AppArmor at all.
const DefaultAppArmorEnabledFile = "/sys/module/apparmor/parameters/enabled"

// DefaultAppArmorFS is AppArmor's directory in securityfs; its "profiles"
// file lists the loaded profiles. The DaemonSet mounts the node's
// /sys/kernel/security there.
const DefaultAppArmorFS = "/sys/kernel/security/apparmor"

// AppArmorRecordDir is the directory, under this namespace's directory of
// the seccomp root, where the agent keeps the text of every AppArmor
// profile it loaded, so that it can unload it once the profile is gone,
// across restarts too.
const AppArmorRecordDir = ".apparmor"

// AppArmorEnabled reports whether the node's kernel has AppArmor enabled,
// and why not (AppArmorKernel; a file that cannot be read is a "no" too,
// with the error).
func AppArmorEnabled(enabledFile string) (bool, string) {
	ok, why, err := AppArmorKernel(enabledFile)
	if err != nil {
		return false, err.Error()
	}
	return ok, why
}

// AppArmorKernel reports whether the node's kernel has AppArmor enabled
// and, when not, why: a fact of the kernel (no AppArmor at all, or
// disabled). err is set instead when the file that says so cannot be read:
// nothing is known of the kernel then, and a profile is not Unsupported
// but Failed (a failure of the agent's set-up, never "no AppArmor").
func AppArmorKernel(enabledFile string) (ok bool, why string, err error) {
	b, err := os.ReadFile(enabledFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, "the kernel has no AppArmor (" + enabledFile + " is absent)", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("cannot tell whether the kernel has AppArmor: reading %s: %w", enabledFile, err)
	}
	if v := strings.TrimSpace(string(b)); v != "Y" {
		return false, fmt.Sprintf("AppArmor is disabled (%s is %q)", enabledFile, v), nil
	}
	return true, "", nil
}

// parser finds apparmor_parser.
func (a *Agent) parser() (string, error) {
	name := a.cfg.AppArmorParser
	if name == "" {
		name = "apparmor_parser"
	}
	return exec.LookPath(name)
}

// runParser runs apparmor_parser with the policy text on its standard input;
// the cache is neither read nor written (-K), so nothing is written in the
// agent's read-only root file system.
func (a *Agent) runParser(ctx context.Context, parser, op, policy string) error {
	cmd := exec.CommandContext(ctx, parser, op, "--skip-cache")
	cmd.Stdin = strings.NewReader(policy)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("apparmor_parser %s: %s", op, msg)
	}
	return nil
}

// loadAppArmor loads an AppArmor profile (the node has AppArmor): the text
// is recorded first (so that it can be unloaded later), then loaded with
// replace semantics, then looked for among the loaded profiles in
// securityfs when that file can be read.
func (a *Agent) loadAppArmor(ctx context.Context, p api.Profile) (api.Status, string) {
	if a.cfg.NoAppArmorLoad {
		return api.Failed, "AppArmor is enabled but the agent is deployed without the privileges to load AppArmor profiles (seccomp only)"
	}
	if err := api.ValidateProfileName(p.Name); err != nil {
		return api.Failed, err.Error()
	}
	parser, err := a.parser()
	if err != nil {
		return api.Failed, "AppArmor is enabled but apparmor_parser is not in the agent image"
	}
	if _, err := os.Stat(a.cfg.AppArmorFS); err != nil {
		// E.g. a node that is itself a container without securityfs mounted.
		return api.Failed, fmt.Sprintf("AppArmor is enabled but its securityfs directory %s is not there (%v): the node's /sys/kernel/security must be securityfs", a.cfg.AppArmorFS, err)
	}
	if err := a.recordAppArmor(p.Name, p.Content); err != nil {
		// Loading still works; only unloading after a restart would miss it.
		a.logf("recording AppArmor profile %s: %v", p.Name, err)
	}
	if err := a.runParser(ctx, parser, "--replace", p.Content); err != nil {
		return api.Failed, err.Error()
	}
	if loaded, known := a.appArmorLoaded(p.Name); known && !loaded {
		return api.Failed, fmt.Sprintf("apparmor_parser succeeded but no profile %q is in %s: the policy must define a profile named like the object",
			p.Name, filepath.Join(a.cfg.AppArmorFS, "profiles"))
	}
	return api.Installed, ""
}

// unloadAppArmor removes a profile this agent loaded (apparmor_parser
// --remove with the recorded text) and forgets it.
func (a *Agent) unloadAppArmor(ctx context.Context, name string) error {
	rec := filepath.Join(a.Dir(), AppArmorRecordDir, name)
	policy, err := os.ReadFile(rec)
	if errors.Is(err, os.ErrNotExist) {
		return nil // never loaded here
	}
	if err != nil {
		return err
	}
	if ok, _ := AppArmorEnabled(a.cfg.AppArmorEnabledFile); ok {
		parser, err := a.parser()
		if err != nil {
			return fmt.Errorf("unloading AppArmor profile %s: apparmor_parser is not in the agent image", name)
		}
		if err := a.runParser(ctx, parser, "--remove", string(policy)); err != nil {
			if loaded, known := a.appArmorLoaded(name); !known || loaded {
				return fmt.Errorf("unloading AppArmor profile %s: %w", name, err)
			}
			// Not loaded (e.g. the node rebooted): nothing to remove.
		}
		a.logf("unloaded AppArmor profile %s (its profile is gone)", name)
	}
	if err := os.Remove(rec); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// recordAppArmor keeps the text of a loaded profile.
func (a *Agent) recordAppArmor(name, policy string) error {
	dir := filepath.Join(a.Dir(), AppArmorRecordDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, name), name, policy, 0o600)
}

// appArmorRecords lists the profiles this agent loaded and has not unloaded.
func (a *Agent) appArmorRecords() ([]string, error) {
	entries, err := listDir(filepath.Join(a.Dir(), AppArmorRecordDir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// appArmorLoaded reports whether the kernel lists a profile of that name
// (lines "name (mode)" of <securityfs>/apparmor/profiles); known is false
// when that file cannot be read.
func (a *Agent) appArmorLoaded(name string) (loaded, known bool) {
	b, err := os.ReadFile(filepath.Join(a.cfg.AppArmorFS, "profiles"))
	if err != nil {
		return false, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if i := strings.LastIndex(l, " ("); i >= 0 && l[:i] == name {
			return true, true
		}
	}
	return false, true
}
