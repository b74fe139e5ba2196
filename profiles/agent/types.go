package agent

import "k8s.io/apimachinery/pkg/runtime/schema"

type runtimeGVR = schema.GroupVersionResource

type schemaGVR = schema.GroupVersionResource
