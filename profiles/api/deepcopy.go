package api

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies s into out.
func (s *ProfileStatus) DeepCopyInto(out *ProfileStatus) {
	*out = *s
	if s.Nodes != nil {
		out.Nodes = make(map[Status]int32, len(s.Nodes))
		for k, v := range s.Nodes {
			out.Nodes[k] = v
		}
	}
	if s.NotReady != nil {
		out.NotReady = append([]string(nil), s.NotReady...)
	}
}

// DeepCopy returns a copy of s.
func (s *ProfileStatus) DeepCopy() *ProfileStatus {
	if s == nil {
		return nil
	}
	out := new(ProfileStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies p into out.
func (p *SeccompProfile) DeepCopyInto(out *SeccompProfile) {
	*out = *p
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = p.Spec
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of p.
func (p *SeccompProfile) DeepCopy() *SeccompProfile {
	if p == nil {
		return nil
	}
	out := new(SeccompProfile)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *SeccompProfile) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *SeccompProfileList) DeepCopyInto(out *SeccompProfileList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]SeccompProfile, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *SeccompProfileList) DeepCopy() *SeccompProfileList {
	if l == nil {
		return nil
	}
	out := new(SeccompProfileList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *SeccompProfileList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies p into out.
func (p *AppArmorProfile) DeepCopyInto(out *AppArmorProfile) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = p.Spec
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of p.
func (p *AppArmorProfile) DeepCopy() *AppArmorProfile {
	if p == nil {
		return nil
	}
	out := new(AppArmorProfile)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *AppArmorProfile) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *AppArmorProfileList) DeepCopyInto(out *AppArmorProfileList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]AppArmorProfile, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *AppArmorProfileList) DeepCopy() *AppArmorProfileList {
	if l == nil {
		return nil
	}
	out := new(AppArmorProfileList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *AppArmorProfileList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *ProfileNodeStatus) DeepCopyInto(out *ProfileNodeStatus) {
	*out = *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a copy of s.
func (s *ProfileNodeStatus) DeepCopy() *ProfileNodeStatus {
	if s == nil {
		return nil
	}
	out := new(ProfileNodeStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (s *ProfileNodeStatus) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *ProfileNodeStatusList) DeepCopyInto(out *ProfileNodeStatusList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]ProfileNodeStatus, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *ProfileNodeStatusList) DeepCopy() *ProfileNodeStatusList {
	if l == nil {
		return nil
	}
	out := new(ProfileNodeStatusList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *ProfileNodeStatusList) DeepCopyObject() runtime.Object { return l.DeepCopy() }
