package profiles

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/profiles/api"
)

// CRDsInstalled says whether every CRD of the API is on the cluster (a run
// against an existing cluster removes afterwards the CRDs it added).
func (c *Cluster) CRDsInstalled(ctx context.Context) (bool, error) {
	crds, err := api.CRDs()
	if err != nil {
		return false, err
	}
	for _, crd := range crds {
		_, err := c.Dynamic.Resource(api.CRDResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}
