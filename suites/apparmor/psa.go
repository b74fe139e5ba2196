package apparmor

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	admissionapi "k8s.io/pod-security-admission/api"

	fx "github.com/skewproof/skewproof/fixtures"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// setEnforce sets the namespace's Pod Security enforce level, then waits
// until the API server enforces it. Pod Security reads namespaces from its
// informer, so a pod created right after the label can still be admitted
// under the namespace's old level (seen once, under load: baseline's first
// pod, Unconfined, accepted). A server-side dry run of a privileged pod,
// which both levels forbid, shows when the new level holds: it is refused
// naming that level.
func setEnforce(ctx context.Context, t *h.Scenario, level admissionapi.Level) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns, err := t.F.ClientSet.CoreV1().Namespaces().Get(ctx, t.NS, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ns.Labels[admissionapi.EnforceLevelLabel] = string(level)
		ns.Labels[admissionapi.EnforceVersionLabel] = "latest"
		_, err = t.F.ClientSet.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		return err
	})
	Expect(err).NotTo(HaveOccurred(), "labelling namespace %s %s", t.NS, level)
	probe := fx.Pod("psa-level-probe", fx.Unschedulable(), fx.Container("privileged", fx.WithPrivileged()))
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = t.F.ClientSet.CoreV1().Pods(t.NS).Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), enforcedMessage(level)), nil
	})
	Expect(err).NotTo(HaveOccurred(), "namespace %s labelled %s, but a privileged pod's dry run is not refused at that level: %v", t.NS, level, last)
}

// enforcedMessage is what Pod Security's refusal says of the level
// (`violates PodSecurity "baseline:latest"`).
func enforcedMessage(level admissionapi.Level) string {
	return `violates PodSecurity "` + string(level) + `:latest"`
}

// KEP-24 §Version Skew Strategy › Pod Security Admission.
var _ = Describe("[apparmor] Pod Security admission", Label("apparmor", "psa"), func() {
	h.SetUp(family)
	h.APIRule("apparmor/psa", func(ctx context.Context, t *h.Scenario) {
		var subs []h.Sub
		for _, level := range []admissionapi.Level{admissionapi.LevelBaseline, admissionapi.LevelRestricted} {
			setEnforce(ctx, t, level)
			l := string(level)
			pod := func(name string, opts ...fx.PodOption) *corev1.Pod {
				if level == admissionapi.LevelRestricted {
					opts = append(opts, fx.Restricted())
				}
				return fx.Pod(l+"-"+name, append(opts, fx.Unschedulable())...)
			}
			if !t.AppArmorFields() {
				// Before v1.30 the annotations are the API (a field sent
				// is dropped as unknown): the annotation sub-cases, with
				// runtime/default for the field RuntimeDefault.
				subs = append(subs,
					h.Sub{Name: l + ": annotation unconfined", Want: h.Fragment(0), Obs: t.Create(ctx, pod("ann-unconfined", fx.Annotation(ctrAnn, "unconfined")))},
					h.Sub{Name: l + ": no profile", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("unset"))},
					h.Sub{Name: l + ": annotation runtime/default", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("ann-runtime-default", fx.Annotation(ctrAnn, "runtime/default")))},
					h.Sub{Name: l + ": annotation localhost/<p>", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("ann-localhost", fx.Annotation(ctrAnn, "localhost/"+profile)))},
				)
				continue
			}
			subs = append(subs,
				// Rejected, with the oracle's message fragment each shows.
				h.Sub{Name: l + ": pod field Unconfined", Want: h.Fragment(0), Obs: t.Create(ctx, pod("pod-unconfined", fx.PodAppArmor(fx.AppArmor(unconfined, nil))))},
				h.Sub{Name: l + ": container field Unconfined", Want: h.Fragment(1), Obs: t.Create(ctx, pod("ctr-unconfined", fx.ContainerAppArmor(fx.AppArmor(unconfined, nil))))},
				h.Sub{Name: l + ": annotation unconfined", Want: h.Fragment(0), Obs: t.Create(ctx, pod("ann-unconfined", fx.Annotation(ctrAnn, "unconfined")))},
				// Allowed (the rule's own statement).
				h.Sub{Name: l + ": no profile", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("unset"))},
				h.Sub{Name: l + ": container field RuntimeDefault", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("runtime-default", fx.ContainerAppArmor(fx.AppArmor(runtimeDefault, nil))))},
				h.Sub{Name: l + ": pod field Localhost", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("localhost", fx.PodAppArmor(fx.LocalhostAppArmor(profile))))},
				h.Sub{Name: l + ": annotation localhost/<p>", Want: h.AdmittedInstead, Obs: t.Create(ctx, pod("ann-localhost", fx.Annotation(ctrAnn, "localhost/"+profile)))},
			)
		}
		t.Judge(subs...)
	})
})
