package nodefacts

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A 404 that names no object is a resource the server does not serve; one
// that names the object is an absent object.
func TestResourceNotServed(t *testing.T) {
	notServed := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}
	absent := apierrors.NewNotFound(schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}, "skewproof-noseccomp")
	if !ResourceNotServed(notServed) || ResourceNotServed(absent) || ResourceNotServed(nil) || ResourceNotServed(errors.New("x")) {
		t.Error("ResourceNotServed misjudges")
	}
}

// On an API server without node.k8s.io/v1 (v1.19) the RuntimeClasses are
// created, read and deleted as v1beta1.
func TestRuntimeClassesV1beta1(t *testing.T) {
	cs := fake.NewSimpleClientset()
	cs.PrependReactor("*", "runtimeclasses", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Version == "v1" {
			return true, nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound}}
		}
		return false, nil, nil
	})
	ctx := context.Background()
	made, err := EnsureRestrictedRuntimeClasses(ctx, cs, nil)
	if err != nil || len(made) != 2 {
		t.Fatalf("created %v, %v", made, err)
	}
	if _, err := cs.NodeV1beta1().RuntimeClasses().Get(ctx, NoSeccompHandler, metav1.GetOptions{}); err != nil {
		t.Errorf("no v1beta1 RuntimeClass: %v", err)
	}
	if err := GetRuntimeClass(ctx, cs, NoSeccompHandler); err != nil {
		t.Errorf("GetRuntimeClass: %v", err)
	}
	if err := DeleteRuntimeClasses(ctx, cs, made); err != nil {
		t.Fatal(err)
	}
	if err := GetRuntimeClass(ctx, cs, NoSeccompHandler); !apierrors.IsNotFound(err) {
		t.Errorf("after deleting: %v", err)
	}
}
