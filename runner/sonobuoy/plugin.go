// Package sonobuoy is the Sonobuoy side of skewproof's conformance image: the
// plugin definition that runs the image as a Sonobuoy plugin, and the pieces of
// Sonobuoy's plugin contract the in-cluster entrypoint honours (results
// directory, done file, progress updates).
//
// The contract was read from the source of github.com/vmware-tanzu/sonobuoy
// (commit 307560188828ce124c575f60fcd30e8fb7cd45b7); the files are named where
// each piece is implemented.
package sonobuoy

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	// PluginName is the plugin-name of the generated plugin definition. It is
	// also the prefix of Sonobuoy's per-plugin flags, e.g.
	// `sonobuoy run --plugin-env skewproof.E2E_FOCUS=...`.
	PluginName = "skewproof"

	// DefaultResultsDir is Sonobuoy's default results directory
	// (pkg/plugin/constants.go: ResultsDir = "/tmp/sonobuoy/results").
	DefaultResultsDir = "/tmp/sonobuoy/results"

	// Entrypoint is the command the plugin container runs.
	Entrypoint = "/usr/local/bin/skewproof"

	// EntrypointSubcommand is the subcommand of Entrypoint that runs the suites.
	EntrypointSubcommand = "conformance-entrypoint"

	// nobody is the uid (and gid) the plugin container runs as.
	nobody int64 = 65534
)

// The environment of the conformance image, declared once here for the
// plugin that sets it and the entrypoint (runner/incluster) that reads it.
// The E2E_ names carry the same meaning as in the upstream conformance image
// (registry.k8s.io/conformance) and Hydrophone, so Sonobuoy and Hydrophone
// users can reuse their habits; RESULTS_DIR is Sonobuoy's.
const (
	EnvResultsDir      = "RESULTS_DIR"
	EnvFocus           = "E2E_FOCUS"
	EnvSkip            = "E2E_SKIP"
	EnvExtraArgs       = "E2E_EXTRA_ARGS"
	EnvExtraGinkgoArgs = "E2E_EXTRA_GINKGO_ARGS"
	EnvDryRun          = "E2E_DRYRUN"
)

// Result formats and drivers Sonobuoy knows. Formats: pkg/client/results/processing.go
// (ResultFormatJUnit ...); drivers: pkg/plugin/manifest/manifest.go ("Either 'Job' or 'Daemonset'")
// and pkg/plugin/driver/base.go (DefaultPodSpec).
const (
	DriverJob          = "Job"
	ResultFormatJUnit  = "junit"
	resultsVolumeName  = "results"
	defaultDescription = "Conformance of the Kubernetes seccomp and AppArmor APIs under kube-apiserver/kubelet version skew (skewproof)."
)

// PluginOptions are the inputs of Plugin.
type PluginOptions struct {
	// Image is the skewproof conformance image; required.
	Image string
	// Focus, Skip and ExtraArgs become E2E_FOCUS, E2E_SKIP and E2E_EXTRA_ARGS.
	Focus, Skip, ExtraArgs string
	// Description overrides the default description; optional.
	Description string
	// SourceURL is written to source-url when set; optional.
	SourceURL string
}

// sonobuoyConfig is the subset of Sonobuoy's manifest.SonobuoyConfig
// (pkg/plugin/manifest/manifest.go) that skewproof sets, with the same JSON
// tags (Sonobuoy decodes plugin files with apimachinery's YAML serializer,
// pkg/plugin/manifest/serializer.go, which goes through these JSON tags).
type sonobuoyConfig struct {
	Driver       string `json:"driver"`
	PluginName   string `json:"plugin-name"`
	ResultFormat string `json:"result-format,omitempty"`
	Description  string `json:"description,omitempty"`
	SourceURL    string `json:"source-url,omitempty"`
}

// manifest mirrors the part of Sonobuoy's manifest.Manifest
// (pkg/plugin/manifest/manifest.go) that skewproof writes: sonobuoy-config
// and spec. The pod spec and the "results" emptyDir volume are Sonobuoy's
// (pkg/plugin/driver/job/job.go: createPodDefinition adds the volume and the
// sonobuoy-worker sidecar).
type manifest struct {
	SonobuoyConfig sonobuoyConfig   `json:"sonobuoy-config"`
	Spec           corev1.Container `json:"spec"`
}

// Plugin returns the Sonobuoy plugin definition (YAML) that runs the
// skewproof conformance image as a Job plugin whose results are JUnit XML.
func Plugin(o PluginOptions) ([]byte, error) {
	if o.Image == "" {
		return nil, errors.New("sonobuoy plugin: an image is required")
	}
	desc := o.Description
	if desc == "" {
		desc = defaultDescription
	}
	m := manifest{
		SonobuoyConfig: sonobuoyConfig{
			Driver:       DriverJob,
			PluginName:   PluginName,
			ResultFormat: ResultFormatJUnit,
			Description:  desc,
			SourceURL:    o.SourceURL,
		},
		Spec: container(o),
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("sonobuoy plugin: %w", err)
	}
	return b, nil
}

func container(o PluginOptions) corev1.Container {
	yes, no, uid := true, false, nobody
	return corev1.Container{
		Name:            "plugin",
		Image:           o.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{Entrypoint, EntrypointSubcommand},
		// Sonobuoy also sets RESULTS_DIR (and SONOBUOY_RESULTS_DIR) itself to its
		// configured results dir and re-points the "results" mount at it
		// (pkg/client/gen.go: applyAutoEnvVars; pkg/discovery/discovery.go:
		// AutoAttachResultsDir), so the two stay equal if a run changes it.
		Env: []corev1.EnvVar{
			{Name: EnvResultsDir, Value: DefaultResultsDir},
			{Name: EnvFocus, Value: o.Focus},
			{Name: EnvSkip, Value: o.Skip},
			{Name: EnvExtraArgs, Value: o.ExtraArgs},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: resultsVolumeName, MountPath: DefaultResultsDir},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             &yes,
			RunAsUser:                &uid,
			RunAsGroup:               &uid,
			AllowPrivilegeEscalation: &no,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}
