package sonobuoy

import (
	"os"
	"strconv"
)

// Environment variables Sonobuoy adds to every plugin container when it
// generates a run (`sonobuoy gen` and `sonobuoy run` both go through
// GenerateManifestAndPlugins): pkg/client/gen.go, applyAutoEnvVars, with the
// names defined in the same file (sonobuoyKey ... sonobuoyProgressPortKey).
// They are present since Sonobuoy v0.55.0.
//
//	SONOBUOY               "true"
//	SONOBUOY_K8S_VERSION   the cluster's version, e.g. v1.37.2
//	SONOBUOY_RESULTS_DIR   the results dir (default /tmp/sonobuoy/results)
//	RESULTS_DIR            the same, legacy name
//	SONOBUOY_CONFIG_DIR    /tmp/sonobuoy/config
//	SONOBUOY_PROGRESS_PORT the worker's progress port (default 8099)
//
// The sonobuoy-worker sidecar reads SONOBUOY_RESULTS_DIR and
// SONOBUOY_PROGRESS_PORT itself (pkg/worker/config.go: LoadConfig) and also
// gets RESULTS_DIR from pkg/plugin/driver/base.go (workerEnvironment).
const (
	EnvSonobuoy           = "SONOBUOY"
	EnvSonobuoyK8sVersion = "SONOBUOY_K8S_VERSION"
	EnvSonobuoyResultsDir = "SONOBUOY_RESULTS_DIR"
	EnvSonobuoyConfigDir  = "SONOBUOY_CONFIG_DIR"
	EnvProgressPort       = "SONOBUOY_PROGRESS_PORT"
)

// ResultsDir is the directory the plugin writes its results and done file to:
// $SONOBUOY_RESULTS_DIR (the variable the worker reads, pkg/worker/config.go),
// else $RESULTS_DIR, else /tmp/sonobuoy/results. Sonobuoy sets both variables
// to the same value.
func ResultsDir() string {
	for _, k := range []string{EnvSonobuoyResultsDir, EnvResultsDir} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return DefaultResultsDir
}

// Detected reports whether the process runs as a Sonobuoy plugin: SONOBUOY
// says so when set (Sonobuoy sets it to "true"); without it, any of the
// SONOBUOY_* variables Sonobuoy adds counts. RESULTS_DIR alone does not: the
// plugin definition sets it and it is a common name elsewhere.
func Detected() bool {
	if v, ok := os.LookupEnv(EnvSonobuoy); ok && v != "" {
		b, err := strconv.ParseBool(v)
		return err == nil && b
	}
	for _, k := range []string{EnvProgressPort, EnvSonobuoyResultsDir, EnvSonobuoyConfigDir, EnvSonobuoyK8sVersion} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}
