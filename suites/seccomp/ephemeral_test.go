package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// addEphemeral adds the debugger ephemeral container through the
// ephemeralcontainers subresource.
func (t *scenario) addEphemeral(ctx context.Context, pod string, profile *corev1.SeccompProfile) observe.Observation {
	var p *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := t.Client.CoreV1().Pods(t.NS).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, fx.EphemeralContainer(profile))
		t.warn.take()
		p, err = t.Client.CoreV1().Pods(t.NS).UpdateEphemeralContainers(ctx, pod, cur, metav1.UpdateOptions{})
		return err
	})
	return t.observeWrite(ctx, p, err)
}

// KEP §Version Skew Strategy › Pod Update (ephemeral containers).
var _ = Describe("[seccomp] ephemeral containers", Label("seccomp", "ephemeral"), func() {
	setUp()
	apiRule("seccomp/ephemeral/no-annotation-sync", func(ctx context.Context, t *scenario) {
		t.mustCreate(ctx, fx.Pod("target", fx.Unschedulable(), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
		t.judge(sub{Name: "ephemeral container with field Unconfined", Obs: t.addEphemeral(ctx, "target", fx.Profile(unconfined, ""))})
	})

	for _, c := range []struct {
		id      string
		profile *corev1.SeccompProfile
		what    string
	}{
		{"seccomp/ephemeral/inherit", nil, "pod RuntimeDefault, ephemeral container without a profile"},
		{"seccomp/ephemeral/override", fx.Profile(unconfined, ""), "pod RuntimeDefault, ephemeral container Unconfined"},
	} {
		kubeletRule(c.id, func(ctx context.Context, t *scenario) {
			t.mustCreate(ctx, fx.Pod("target", fx.OnNode(t.nodeName()), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
			app := t.observeContainer(ctx, "target", skew.ContainerName, false)
			Expect(app.State).To(Equal(skew.Running), "the target pod must run first: %s", app)
			obs := t.addEphemeral(ctx, "target", c.profile)
			Expect(obs.Admission).To(Equal(skew.Accepted), "adding the ephemeral container: %v", obs.Errors)
			obs.Container = t.observeContainer(ctx, "target", skew.EphemeralContainerName, false)
			t.judge(sub{Name: c.what, Obs: obs})
		})
	}
})
