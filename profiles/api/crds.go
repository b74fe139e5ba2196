package api

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// crds/ holds the CRDs that `make generate` (controller-gen) writes from the
// +kubebuilder markers on the types.
//
//go:embed crds/*.yaml
var crdFiles embed.FS

// CRDResource is the resource of CustomResourceDefinition objects.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDs returns the CustomResourceDefinitions of the API, sorted by name.
func CRDs() ([]*unstructured.Unstructured, error) {
	entries, err := crdFiles.ReadDir("crds")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		b, err := crdFiles.ReadFile("crds/" + e.Name())
		if err != nil {
			return nil, err
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := d.Decode(&u.Object); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("reading %s: %w", e.Name(), err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// CRDFile returns the YAML of one CRD file ("seccompprofiles", ...).
func CRDFile(plural string) ([]byte, error) {
	return crdFiles.ReadFile("crds/" + Group + "_" + plural + ".yaml")
}
