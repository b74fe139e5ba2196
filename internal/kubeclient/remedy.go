package kubeclient

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Unreachable is the one line to show when a first request to the API
// server of kubeconfig failed without an answer (no API status: connection
// refused, a bad address or certificate), and nil when err is nil or the
// API server answered, even with a refusal.
func Unreachable(kubeconfig string, err error) error {
	if err == nil || errors.As(err, new(apierrors.APIStatus)) {
		return nil
	}
	return fmt.Errorf("cannot reach the API server of %s (%w); check that the cluster runs and the kubeconfig's server address", kubeconfig, err)
}

// WithRemedy adds to a refusal of the API server what to do about it:
// grant (how to grant the missing permissions) to a Forbidden, renewing
// the credentials to an Unauthorized. Any other error stays as it is.
func WithRemedy(err error, grant string) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w; %s", err, grant)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w; the kubeconfig's credentials were refused: renew them", err)
	}
	return err
}
