package clusters

import (
	"context"
	"errors"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/skew"
)

// EnsureRestrictedRuntimeClasses creates a RuntimeClass, labelled with
// labels, for each handler of RestrictedRuntimeHandlers that has none yet,
// and returns the names of those it created (for
// DeleteRuntimeClasses). A RuntimeClass that exists already is left as it is.
func EnsureRestrictedRuntimeClasses(ctx context.Context, cs kubernetes.Interface, labels map[string]string) ([]string, error) {
	var created []string
	for _, h := range RestrictedRuntimeHandlers() {
		_, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: h, Labels: labels},
			Handler:    h,
		}, metav1.CreateOptions{})
		switch {
		case err == nil:
			created = append(created, h)
		case apierrors.IsAlreadyExists(err):
		default:
			return created, fmt.Errorf("creating RuntimeClass %s: %w", h, err)
		}
	}
	return created, nil
}

// DeleteRuntimeClasses deletes the named RuntimeClasses; one already gone
// is no error.
func DeleteRuntimeClasses(ctx context.Context, cs kubernetes.Interface, names []string) error {
	var errs []error
	for _, n := range names {
		if err := cs.NodeV1().RuntimeClasses().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting RuntimeClass %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// createOCIRuntimeClasses creates, in a new cluster, a RuntimeClass for
// each OCI runtime the user provided (UpOptions.OCIRuntimes) that a worker
// runs: named like the runtime, with its runtime handler, scheduled onto
// the nodes labelled with it, so that pods of the user's own can ask for
// it by name as well.
func createOCIRuntimeClasses(ctx context.Context, cs kubernetes.Interface, o UpOptions) error {
	made := map[string]bool{}
	for _, w := range o.workers() {
		name := w.Runtime.OCI
		if _, vendor := o.OCIRuntimes[name]; !vendor || made[name] {
			continue
		}
		made[name] = true
		_, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Handler:    name,
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{skew.OCIRuntimeLabel: name}},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating the RuntimeClass of OCI runtime %s: %w", name, err)
		}
	}
	return nil
}
