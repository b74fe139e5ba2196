package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeStatusName is the name of the status of profile on node:
// "<profile>-<node>" as the design note says, or, when that is longer than a
// name may be, a prefix of it followed by a hash of both names.
func NodeStatusName(profile, node string) string {
	n := profile + "-" + node
	if len(n) <= validation.DNS1123SubdomainMaxLength {
		return n
	}
	h := sha256.Sum256([]byte(profile + "\x00" + node))
	suffix := "-" + hex.EncodeToString(h[:])[:16]
	prefix := n[:validation.DNS1123SubdomainMaxLength-len(suffix)]
	for len(prefix) > 0 && (prefix[len(prefix)-1] == '-' || prefix[len(prefix)-1] == '.') {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + suffix
}

// LabelValue is s when it is a valid label value, else a prefix of s and a
// hash of it (object names may be longer than label values).
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	h := sha256.Sum256([]byte(s))
	suffix := hex.EncodeToString(h[:])[:16]
	prefix := s
	if len(prefix) > validation.LabelValueMaxLength-len(suffix)-1 {
		prefix = prefix[:validation.LabelValueMaxLength-len(suffix)-1]
	}
	for len(prefix) > 0 && !isAlnum(prefix[len(prefix)-1]) {
		prefix = prefix[:len(prefix)-1]
	}
	for len(prefix) > 0 && !isAlnum(prefix[0]) {
		prefix = prefix[1:]
	}
	if prefix == "" {
		return suffix
	}
	return prefix + "-" + suffix
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// NodeStatusLabels are the labels of the status of a profile on a node.
func NodeStatusLabels(kind, profile, node string) map[string]string {
	return map[string]string{
		LabelProfile: LabelValue(profile),
		LabelKind:    kind,
		LabelNode:    LabelValue(node),
	}
}

// ProfileSelector selects every node status of one profile.
func ProfileSelector(kind, profile string) string {
	return labels.SelectorFromSet(labels.Set{LabelProfile: LabelValue(profile), LabelKind: kind}).String()
}

// NodeSelector selects every node status of one node.
func NodeSelector(node string) string {
	return labels.SelectorFromSet(labels.Set{LabelNode: LabelValue(node)}).String()
}

// SeccompLocalhostProfile is the localhostProfile of pods that use the
// SeccompProfile namespace/name: a path relative to the kubelet seccomp root.
func SeccompLocalhostProfile(namespace, name string) string {
	return path.Join(SeccompDir, namespace, name+".json")
}

// ValidateProfileName checks a profile name (a DNS subdomain, as every
// object name; it also becomes a file name or an AppArmor profile name).
func ValidateProfileName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("profile name %q: %v", name, errs)
	}
	return nil
}
