package kubeclient

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRemedies(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no"))
	unauthorized := apierrors.NewUnauthorized("no")
	refused := errors.New("dial tcp 127.0.0.1:6443: connection refused")

	if err := Unreachable("kc", forbidden); err != nil {
		t.Errorf("Unreachable(Forbidden) = %v; the API server answered", err)
	}
	if err := Unreachable("kc", nil); err != nil {
		t.Errorf("Unreachable(nil) = %v", err)
	}
	if err := Unreachable("kc", refused); err == nil || !errors.Is(err, refused) ||
		err.Error() != "cannot reach the API server of kc (dial tcp 127.0.0.1:6443: connection refused); check that the cluster runs and the kubeconfig's server address" {
		t.Errorf("Unreachable(refused) = %v", err)
	}

	if err := WithRemedy(forbidden, "grant it"); !apierrors.IsForbidden(err) || err.Error() != forbidden.Error()+"; grant it" {
		t.Errorf("WithRemedy(Forbidden) = %v", err)
	}
	if err := WithRemedy(unauthorized, "grant it"); !apierrors.IsUnauthorized(err) || err.Error() != "no; the kubeconfig's credentials were refused: renew them" {
		t.Errorf("WithRemedy(Unauthorized) = %v", err)
	}
	if err := WithRemedy(refused, "grant it"); err != refused {
		t.Errorf("WithRemedy(other) = %v, want it unchanged", err)
	}
	if err := WithRemedy(nil, "grant it"); err != nil {
		t.Errorf("WithRemedy(nil) = %v", err)
	}
}
