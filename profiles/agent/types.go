package agent

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type schemaGVR = schema.GroupVersionResource

func ptrIntOrString(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
