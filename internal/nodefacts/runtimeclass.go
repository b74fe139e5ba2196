package nodefacts

import (
	"context"
	"errors"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/internal/rbac"
)

// Runtime handlers of every node image whose OCI runtime drops one
// security setting from the container's OCI spec before the OCI runtime
// sees it: the "runtime without seccomp support" rows of KEP-135's failure
// table and the "runtime without AppArmor support" row of KEP-24's. A
// RuntimeClass with the handler's name selects one.
const (
	NoSeccompHandler  = "skewproof-noseccomp"
	NoAppArmorHandler = "skewproof-noapparmor"
)

// RestrictedRuntimeHandlers are the handlers above, in a stable order.
func RestrictedRuntimeHandlers() []string { return []string{NoSeccompHandler, NoAppArmorHandler} }

// RestrictedHandlerField is the OCI spec field (a jq path) the restricted
// handler deletes before the OCI runtime sees the spec; ok is false for
// any other handler.
func RestrictedHandlerField(handler string) (field string, ok bool) {
	switch handler {
	case NoSeccompHandler:
		return ".linux.seccomp", true
	case NoAppArmorHandler:
		return ".process.apparmorProfile", true
	}
	return "", false
}

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
		if ResourceNotServed(err) {
			_, err = cs.NodeV1beta1().RuntimeClasses().Create(ctx, &nodev1beta1.RuntimeClass{
				ObjectMeta: metav1.ObjectMeta{Name: h, Labels: labels},
				Handler:    h,
			}, metav1.CreateOptions{})
		}
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
		err := cs.NodeV1().RuntimeClasses().Delete(ctx, n, metav1.DeleteOptions{})
		if ResourceNotServed(err) {
			err = cs.NodeV1beta1().RuntimeClasses().Delete(ctx, n, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting RuntimeClass %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// GetRuntimeClass reads RuntimeClass name as node.k8s.io/v1, or as
// v1beta1 from an API server that serves no v1 (see ResourceNotServed); an
// absent RuntimeClass is a NotFound error.
func GetRuntimeClass(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if ResourceNotServed(err) {
		_, err = cs.NodeV1beta1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	}
	return err
}

// ResourceNotServed reports whether err is the API server's 404 for a
// resource it does not serve at that group version (no object named in
// the status), as opposed to an absent object: node.k8s.io/v1
// RuntimeClasses on a v1.19 API server, which serves them as v1beta1 only
// (v1 from v1.20).
func ResourceNotServed(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	d := se.Status().Details
	return d == nil || d.Name == ""
}

// RuntimeClassRules are the permissions EnsureRestrictedRuntimeClasses,
// GetRuntimeClass and DeleteRuntimeClasses need (create cannot be
// restricted by name: the name is in the request's body).
func RuntimeClassRules() []rbac.Rule {
	return []rbac.Rule{
		rbac.New([]string{"node.k8s.io"}, []string{"runtimeclasses"}, nil,
			"the RuntimeClasses of the restricted runtime handlers (failure row 1) are created where missing", "create"),
		rbac.New([]string{"node.k8s.io"}, []string{"runtimeclasses"}, RestrictedRuntimeHandlers(),
			"failure row 1 reads its RuntimeClass; those created for the run are deleted when it ends", "get", "delete"),
	}
}
