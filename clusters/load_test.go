package clusters

import "testing"

func TestFullImageName(t *testing.T) {
	for in, want := range map[string]string{
		"skewproof.local/skewproof-agent:1": "skewproof.local/skewproof-agent:1",
		"sonobuoy/sonobuoy:v0.57.5":         "docker.io/sonobuoy/sonobuoy:v0.57.5",
		"busybox:1":                         "docker.io/library/busybox:1",
		"localhost/x:1":                     "localhost/x:1",
		"registry:5000/x:1":                 "registry:5000/x:1",
		"docker.io/library/busybox:1":       "docker.io/library/busybox:1",
	} {
		if got := fullImageName(in); got != want {
			t.Errorf("fullImageName(%q) = %q, want %q", in, got, want)
		}
	}
}
