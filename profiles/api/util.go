package api

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

type runtimeGVR = schema.GroupVersionResource

func typesUID(s string) types.UID { return types.UID(s) }
