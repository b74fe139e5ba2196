package apparmor

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// podDenyWrite is the pod-level profile of the scenarios with several
// containers: the Localhost fixture that denies writes, whose effect (a
// write fails with EACCES) no runtime default profile has.
var podDenyWrite = fx.PodAppArmor(fx.LocalhostAppArmor(profile))

// writes is what a container under its own Unconfined must be able to do:
// the pod's deny-write profile must not reach it.
var writes = &h.Probe{Label: "write", Shell: "echo x > /tmp/probe-write"}

// KEP-24 §Proposal › API: the pod-level field applies to every container of
// the pod, a container's own field overrides it; §Pod Annotations:
// "unconfined" is the default for privileged pods.
var _ = Describe("[apparmor] every kind of container", Label("apparmor", "kubelet"), func() {
	h.SetUp(family)
	h.KubeletRule("apparmor/kubelet/init-containers", func(ctx context.Context, t *h.Scenario) {
		const pod = "init-containers"
		t.StartOnNode(ctx, pod, podDenyWrite, fx.InitContainer(names.InitContainerName))
		// The init container is observed while it runs (it runs until
		// ended), then ended so that the pod goes on.
		init := t.ObserveRunning(ctx, pod, names.InitContainerName, skew.CaseInit, "init container without a profile (pod Localhost "+profile+")", nil)
		_, _, _ = t.Exec(ctx, pod, names.InitContainerName, "kill", "1")
		t.Judge(init)
	})

	h.KubeletRule("apparmor/kubelet/sidecar", func(ctx context.Context, t *h.Scenario) {
		const pod = "sidecar"
		t.StartOnNode(ctx, pod, podDenyWrite, fx.Sidecar(names.SidecarContainerName))
		t.Judge(t.ObserveRunning(ctx, pod, names.SidecarContainerName, skew.CaseSidecar, "sidecar without a profile (pod Localhost "+profile+")", nil))
	})

	h.KubeletRule("apparmor/kubelet/second-container", func(ctx context.Context, t *h.Scenario) {
		const pod = "second-container"
		t.StartOnNode(ctx, pod, podDenyWrite, fx.ContainerAppArmor(fx.AppArmor(unconfined, nil)), fx.Container(names.SecondContainerName))
		t.Judge(
			t.ObserveRunning(ctx, pod, names.ContainerName, skew.CaseOwn, "container app with its own Unconfined", writes),
			t.ObserveRunning(ctx, pod, names.SecondContainerName, skew.CaseSecond, "container second without a profile (pod Localhost "+profile+")", nil),
		)
	})

	h.KubeletRule("apparmor/kubelet/privileged-default", func(ctx context.Context, t *h.Scenario) {
		const pod = "privileged-default"
		const priv, control = "privileged", "unconfined"
		// The control's Unconfined: its field, or before v1.30 its
		// annotation (containerProfile).
		controlOpts := []fx.PodOption{fx.Container(control, fx.WithAppArmor(fx.AppArmor(unconfined, nil)))}
		if !t.AppArmorFields() {
			controlOpts = []fx.PodOption{fx.Container(control), fx.Annotation(skew.AppArmorAnnotation(control), "unconfined")}
		}
		t.StartOnNode(ctx, pod, append([]fx.PodOption{fx.Container(priv, fx.WithPrivileged())}, controlOpts...)...)
		def := observe.Observation{Container: t.ObserveContainer(ctx, pod, names.ContainerName, false)}
		un := observe.Observation{Container: t.ObserveContainer(ctx, pod, control, false)}
		pr := observe.Observation{Container: t.ObserveContainer(ctx, pod, priv, false)}
		defMust, prMust, unmade := privilegedChecks(ctx, t, pod, priv, control, def.Container, un.Container, pr.Container)
		t.Judge(
			h.Sub{Name: "privileged container, no profile", Obs: pr, Want: observe.ForCase(skew.CasePrivileged), Must: prMust, Unmade: unmade},
			h.Sub{Name: "container app, no profile (the runtime default)", Obs: def, Want: observe.ForCase(skew.CaseRuntimeDefault), Must: defMust},
			h.Sub{Name: "container unconfined, its own Unconfined (the control)", Obs: un, Want: observe.ForCase(skew.CaseUnconfined)},
		)
	})
})

// privilegedChecks probes the three containers of
// apparmor/kubelet/privileged-default with h.ProcWriteProbe. The non-privileged
// container without a profile must be confined ("(enforce)") and, where
// the node's runtime default profile was read, must be denied the open
// that the Unconfined control makes; the privileged one must make it (no
// default profile in force). Without a working control nothing shows
// what the runtime default denies: unmade.
func privilegedChecks(ctx context.Context, t *h.Scenario, pod, priv, control string, def, un, pr *observe.Container) (defMust, prMust []string, unmade *h.Unmade) {
	if def.State != skew.Running || un.State != skew.Running || pr.State != skew.Running {
		return nil, nil, nil
	}
	if !strings.HasSuffix(def.AppArmorProfile, "(enforce)") {
		defMust = append(defMust, "a non-privileged container without a profile must be confined by the runtime default in enforce mode, got "+
			orNone(def.AppArmorProfile))
	}
	unOK, unDesc := t.AppArmorControlFrom(ctx, pod, control)
	defOK, defDesc := t.Try(ctx, pod, names.ContainerName, h.ProcWrite, h.ProcWriteProbe)
	prOK, prDesc := t.Try(ctx, pod, priv, h.ProcWrite, h.ProcWriteProbe)
	un.Behaviour, def.Behaviour, pr.Behaviour = unDesc, defDesc, prDesc
	if !unOK {
		return defMust, nil, &h.Unmade{Reason: "the Unconfined control cannot open /proc/uptime for writing on node " + t.NodeName() +
			" (" + unDesc + "): nothing shows what the runtime default denies"}
	}
	if researched := t.Exp.Expected; caseProfile(researched, skew.CaseRuntimeDefault) != "" &&
		(defOK || !strings.Contains(defDesc, "Permission denied")) {
		defMust = append(defMust, "the runtime default profile must deny opening /proc/uptime for writing (EACCES), which the Unconfined control shows is not denied otherwise: "+defDesc)
	}
	if !prOK {
		prMust = append(prMust, "a privileged container without a profile must run without the runtime default profile: opening /proc/uptime for writing failed: "+prDesc)
	}
	return defMust, prMust, nil
}

// caseProfile is the AppArmor label the oracle expects for case c ("" when
// it asserts none: a runtime whose default profile nobody read).
func caseProfile(o skew.Observation, c string) string {
	for _, oc := range o.Cases {
		if oc.Case == c {
			return oc.AppArmorProfile
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no label"
	}
	return s
}
