package status

import "k8s.io/apimachinery/pkg/runtime/schema"

type runtimeGVR = schema.GroupVersionResource
