package seccomp

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// KEP §Version Skew Strategy › Pod Update.
var _ = Describe("[seccomp] pod update", Label("seccomp", "update"), func() {
	setUp()
	apiRule("seccomp/update/field-immutable", func(ctx context.Context, t *scenario) {
		t.mustCreate(ctx, fx.Pod("immutable", fx.Unschedulable(),
			fx.PodSeccomp(fx.Profile(runtimeDefault, "")),
			fx.ContainerSeccomp(fx.Profile(runtimeDefault, ""))))
		change := func(mutate func(*corev1.Pod)) observe.Observation {
			p, err := t.updatePod(ctx, "immutable", mutate)
			return t.observeWrite(ctx, p, err)
		}
		t.judge(
			sub{Name: "pod field RuntimeDefault → Unconfined", Want: admissionOnly, Obs: change(func(p *corev1.Pod) {
				p.Spec.SecurityContext.SeccompProfile = fx.Profile(unconfined, "")
			})},
			sub{Name: "container field RuntimeDefault → Unconfined", Want: admissionOnly, Obs: change(func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext.SeccompProfile = fx.Profile(unconfined, "")
			})},
		)
	})

	kubeletRule("seccomp/update/annotation-ignored", func(ctx context.Context, t *scenario) {
		t.mustCreate(ctx, fx.Pod("annotated", fx.OnNode(t.nodeName()), fx.PodSeccomp(fx.Profile(runtimeDefault, ""))))
		before := t.observeContainer(ctx, "annotated", skew.ContainerName, false)
		Expect(before.State).To(Equal(skew.Running), "the pod must run before its annotations change: %s", before)

		// Update the annotations to unconfined, then restart the container.
		p, err := t.updatePod(ctx, "annotated", func(p *corev1.Pod) {
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[skew.SeccompPodAnnotation] = "unconfined"
			p.Annotations[skew.SeccompContainerAnnotation(skew.ContainerName)] = "unconfined"
		})
		obs := t.observeWrite(ctx, p, err)
		if obs.Admission == skew.Accepted {
			restarts := restartCount(ctx, t, "annotated")
			_, _, _ = t.exec(ctx, "annotated", skew.ContainerName, "kill", "1")
			err := e2epod.WaitForPodCondition(ctx, t.F.ClientSet, t.NS, "annotated", "restarted and running", podTimeout, func(p *corev1.Pod) (bool, error) {
				s, _ := podStatus(p, skew.ContainerName)
				return s.RestartCount > restarts && s.State.Running != nil, nil
			})
			Expect(err).NotTo(HaveOccurred(), "waiting for the container to restart after kill 1")
			obs.Container = t.observeContainer(ctx, "annotated", skew.ContainerName, false)
			obs.Container.Behaviour = "restarted after the annotation update"
		}
		t.judge(sub{Name: "annotations → unconfined, container restarted", Obs: obs})
	})
})

func restartCount(ctx context.Context, t *scenario, pod string) int32 {
	p, err := t.pods().Get(ctx, pod, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	s, _ := podStatus(p, skew.ContainerName)
	return s.RestartCount
}

// updatePod applies mutate to the current pod and updates it, again on a
// conflict (the scheduler and the kubelet write the pod's status meanwhile).
// Warnings of earlier requests are dropped first.
func (t *scenario) updatePod(ctx context.Context, name string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := t.Client.CoreV1().Pods(t.NS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(p)
		t.warn.take()
		out, err = t.Client.CoreV1().Pods(t.NS).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	return out, err
}
