# skewproof — see README.md
SHELL := /bin/bash
GO ?= go
# The Go compiler collects garbage less often: on these 2-core machines a
# cold build of containerd took 139 instead of 153-186 CPU-seconds of user
# time (docs/measurements.md); the node images' builds do the same.
GOGC ?= 200
export GOGC
# bin/skewproof is the launcher (cmd/launcher): it runs 'simulate' itself
# and hands every other command to the full CLI beside it, bin/skewproof-core
# (cmd/skewproof, a complete skewproof on its own).
BIN := bin/skewproof
CORE := bin/skewproof-core
# The suites, compiled once into one Ginkgo binary (the layout of the
# Kubernetes e2e tests); 'skewproof run' uses it from beside $(BIN).
E2E := bin/skewproof-e2e.test
# The default cluster of `make conformance`: control plane at APISERVER and
# one worker per kubelet version its skew window allows (newest served patch
# of each minor).
APISERVER ?= 1.37.2
KUBELETS ?= 1.34.4,1.35.4,1.36.3,1.37.2
CLUSTER ?= conformance
# MATRIX=1.34..1.37: every cluster of that matrix instead, merged into one report.
MATRIX ?=
# HISTORY=1: the history preset instead (MATRIX=history): the clusters of the
# annotation eras, seccomp v1.19-v1.27 and AppArmor v1.29-v1.31.
HISTORY ?=
# AppArmor nodes (User-Mode Linux workers whose kernel enforces AppArmor; the
# kernel is built once): auto (the default) gives a host whose kernel has no
# AppArmor one per kubelet, so every AppArmor enforcement row is judged at
# every kubelet; off leaves them out; all adds them on any host; a list of
# versions (1.34.4,1.37.2) only those.
APPARMOR_NODE ?= auto

.PHONY: all build host host-uml unit integration test conformance images matrix clean generate verify

all: build

# -trimpath, static: as the node images' Kubernetes builds, so a cold
# build compiles the packages both need (client-go, k8s.io/api, most of
# k8s.io/kubernetes/pkg) once; go.mod keeps the dependencies of its
# k8s.io/kubernetes release for that (TestProjectSharesKubernetesDependencies).
#
# GO_LDFLAGS: no DWARF and no symbol table (as Kubernetes' release builds):
# skewproof-core is what the node agent's image holds, copied into every node
# at every run: 63 MB instead of 90. Panics still print named stacks (the
# Go runtime's own tables stay); for a debugger, make build GO_LDFLAGS=.
GO_LDFLAGS ?= -s -w
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(GO_LDFLAGS)" -o $(CORE) ./cmd/skewproof
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(GO_LDFLAGS)" -o $(BIN) ./cmd/launcher
	CGO_ENABLED=0 $(GO) test -trimpath -ldflags "$(GO_LDFLAGS)" -c -o $(E2E) ./suites/e2e

# Makes a fresh Debian host ready (Docker engine, runtime wrapper when the
# capability bounding set needs it, dockerd running). Idempotent.
host:
	bash hack/setup-host.sh

# The same, plus what --apparmor-node needs to build its User-Mode Linux kernel.
host-uml:
	bash hack/setup-host.sh --uml

# The browser check of matrix.html must run here (chromium comes with the host set-up).
unit:
	$(GO) vet ./...
	SKEWPROOF_REQUIRE_BROWSER=1 $(GO) test ./...

# The image writer's archives loaded by Docker and imported by containerd, and
# the agent image's apparmor_parser layer. A real mixed-version cluster
# (control plane 1.37.2, worker kubelet 1.34.4)
# built offline; seccomp RuntimeDefault/Unconfined checked on each node. Two
# control planes made at once, each node on its own cluster's network. The
# AppArmor-host path: a kind node with the mounts nodes get on an AppArmor host,
# nested in a User-Mode Linux machine whose kernel enforces AppArmor. Then
# the smoke subsets of the seccomp and AppArmor suites on a cluster of the same pair.
# Then a cluster with an AppArmor node (User-Mode Linux): AppArmor enforced
# there, row 6 on the kind worker; and one whose AppArmor node runs CRI-O. Then vendor mode on an existing cluster:
# every suite from the prebuilt binaries with no Go on PATH, and Hydrophone
# (from the module proxy) running the conformance image. Last, a runtime
# certified: workers on runc, crun, a deliberately wrong --oci-runtime and CRI-O.
integration: host-uml build
	$(GO) test -tags integration -count=1 -timeout 10m -v -run Integration ./internal/image/ ./profiles/agentimage/
	$(GO) test -tags integration -count=1 -timeout 80m -v -run Integration ./clusters/...
	$(BIN) run --name smoke --apiserver 1.37.2 --kubelets 1.34.4 --suites seccomp,apparmor --label-filter smoke --junit-dir _artifacts/smoke
	$(GO) test -tags integration -count=1 -timeout 45m -v -run IntegrationAppArmorNode ./cmd/skewproof/
	$(GO) test -tags integration -count=1 -timeout 50m -v -run IntegrationVendorMode ./cmd/skewproof/
	$(GO) test -tags integration -count=1 -timeout 30m -v -run IntegrationRuntimes ./cmd/skewproof/

test: host-uml unit integration

conformance: $(if $(filter off,$(APPARMOR_NODE)),host,host-uml) build
	APISERVER=$(APISERVER) KUBELETS=$(KUBELETS) CLUSTER=$(CLUSTER) MATRIX=$(MATRIX) HISTORY=$(HISTORY) APPARMOR_NODE=$(APPARMOR_NODE) bash hack/conformance.sh

images: host build
	$(BIN) images build --kubernetes $(APISERVER)
	for k in $$(echo $(KUBELETS) | tr , ' '); do $(BIN) images build --kubernetes $(APISERVER) --kubelet $$k || exit 1; done

matrix: build
	$(BIN) matrix --apiserver 1.34..1.37 --format github

clean:
	rm -rf bin _artifacts

# controller-gen, pinned (its release built on k8s.io/* v0.37, as go.mod);
# `go run` fetches it from the Go module proxy on first use, outside go.mod.
CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
# Where `make generate` writes; hack/verify.sh points it at a scratch copy.
GENERATE_DIR ?= profiles/api

# Regenerates profiles/api/zz_generated.deepcopy.go and the CRDs in
# profiles/api/crds/ from the types and their +kubebuilder markers.
generate:
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(CONTROLLER_GEN) object crd paths=./profiles/api output:object:dir="$$tmp" output:crd:dir="$$tmp/crds" && \
	mkdir -p $(GENERATE_DIR)/crds && rm -f $(GENERATE_DIR)/crds/*.yaml && \
	cp "$$tmp/zz_generated.deepcopy.go" $(GENERATE_DIR)/ && cp "$$tmp"/crds/*.yaml $(GENERATE_DIR)/crds/

# gofmt, go vet, generated files up to date, shellcheck, golangci-lint.
verify:
	bash hack/verify.sh
