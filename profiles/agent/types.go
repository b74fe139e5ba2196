package agent

import "k8s.io/apimachinery/pkg/util/intstr"

func ptrIntOrString(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
