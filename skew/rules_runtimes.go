package skew

// The runtime variants of the rules whose outcome the container runtime
// decides (Rule.Runtimes), with the runtime sources read (RuntimesRead).
// Findings, per rule (docs/runtimes.md has the table):
//
//   - seccomp/kubelet/enforce: containerd 1.7.24 and 2.4.2 give RuntimeDefault
//     containers contrib/seccomp's DefaultProfile, default action
//     SCMP_ACT_ERRNO without DefaultErrnoRet, so runc (1.1.15, 1.5.2) and
//     crun (1.21) answer EPERM; CRI-O 1.34.0 gives containers/common's
//     profile with DefaultErrnoRet ENOSYS. personality(ADDR_NO_RANDOMIZE)
//     and unshare(CLONE_NEWUSER) without CAP_SYS_ADMIN fail everywhere:
//     EPERM on containerd, ENOSYS on CRI-O.
//   - seccomp/failure/row-1: on a host without seccomp filters containerd
//     refuses every profile but Unconfined ("seccomp is not supported",
//     the pod sandbox included); CRI-O runs RuntimeDefault without a
//     profile (a warning) and refuses Localhost. Under an OCI runtime that
//     lacks seccomp (the suite's handler), that OCI runtime decides.
//   - seccomp/failure/row-3: neither CRI runtime checks actions; runc and
//     crun refuse an unknown one at create. containerd runs create at
//     StartContainer (RunContainerError), CRI-O inside CreateContainer
//     (CreateContainerError).
//   - seccomp/failure/row-4: both CRI runtimes read the file in
//     CreateContainer and fail with its path (CreateContainerError).
//   - apparmor/failure/row-3: containerd checks that a Localhost profile is
//     loaded ("apparmor profile not found <p>", CreateContainerError);
//     CRI-O does not: the OCI runtime fails to change to it at create
//     (CreateContainerError), with a message about the apparmor exec
//     attribute that does not name the profile.
//   - The RuntimeDefault AppArmor profile (runtimeDefaultAppArmor in
//     rules_apparmor.go): cri-containerd.apparmor.d, crio-default.
//
// Observed on skewproof's nodes (2026-11-26, docs/runtimes.md "Observed"):
// every variant above on containerd 1.7.24 and 2.4.2 with runc 1.1.15 and
// crun 1.21, and CRI-O 1.34.0 with crun 1.21 (ENOSYS, row 3's
// CreateContainerError, crio-default and AppArmor row 3's message on the
// AppArmor node), except row 1 on a host without seccomp filters (the
// suite stages row 1 with a handler, where both runtimes took the same
// outcome) and runc 1.5.2, which no node image carries.

// Sources of the runtime variants.
const (
	srcSeccompDefaultContainerd = "containerd@v1.7.24 and containerd/v2@v2.4.2 contrib/seccomp/seccomp_default.go: DefaultProfile " +
		"(DefaultAction SCMP_ACT_ERRNO, no DefaultErrnoRet; personality only for 0x0, 0x8, 0x20000, 0x20008, 0xffffffff; unshare only " +
		"under CAP_SYS_ADMIN), from pkg/cri/server/container_create_linux.go generateSeccompSpecOpts (v1.7.24) and " +
		"internal/cri/sputil/seccomp_linux.go GenerateSeccompSpecOpts (v2.4.2); runc@v1.1.15 and runc@v1.5.2 " +
		"libcontainer/seccomp/seccomp_linux.go (actErrno returns EPERM); crun 1.21 src/libcrun/seccomp.c libcrun_generate_seccomp " +
		"(default_errno_value = EPERM)"
	srcSeccompDefaultCRIO = "cri-o@v1.34.0 internal/config/seccomp/seccomp.go: DefaultProfile (containers/common@v0.63.0 " +
		"pkg/seccomp/default_linux.go DefaultProfile: DefaultAction SCMP_ACT_ERRNO with DefaultErrnoRet ENOSYS; personality only for the " +
		"same five values; clone, clone3 and unshare removed from the allow list and added back only under CAP_SYS_ADMIN), " +
		"so personality(ADDR_NO_RANDOMIZE) and unshare(CLONE_NEWUSER) fail with ENOSYS under runc@v1.1.15, runc@v1.5.2 " +
		"(libcontainer/seccomp/seccomp_linux.go honours DefaultErrnoRet) and crun 1.21 (src/libcrun/seccomp.c)"
	srcNoSeccompContainerd = "containerd@v1.7.24 pkg/cri/server/container_create_linux.go: generateSeccompSpecOpts and " +
		"containerd/v2@v2.4.2 internal/cri/sputil/seccomp_linux.go: GenerateSeccompSpecOpts (\"seccomp is not supported\" for any " +
		"profile but Unconfined when pkg/seccomp/seccomp_linux.go isEnabled is false; also for the pod sandbox: " +
		"pkg/cri/server/sandbox_run_linux.go, internal/cri/server/podsandbox/sandbox_run_linux.go)"
	srcNoSeccompCRIO = "cri-o@v1.34.0 internal/config/seccomp/seccomp.go: (*Config).Setup (seccomp disabled: RuntimeDefault " +
		"\"Seccomp is not enabled, running without profile\", Localhost \"seccomp is not enabled, cannot run with custom profile\"); " +
		"server/container_create.go (drops the spec's seccomp section when disabled)"
	srcInvalidActionContainerd = "containerd@v1.7.24 contrib/seccomp/seccomp.go: WithProfile (JSON decode only) and " +
		"pkg/cri/server/container_start.go: StartContainer (\"failed to create containerd task\"); containerd/v2@v2.4.2 the same " +
		"WithProfile and internal/cri/server/container_start.go; runc@v1.1.15, runc@v1.5.2 libcontainer/specconv/spec_linux.go " +
		"SetupSeccomp → libcontainer/seccomp/config.go ConvertStringToAction (\"is not a valid action for seccomp\"); crun 1.21 " +
		"src/libcrun/seccomp.c libcrun_generate_seccomp (\"invalid seccomp action\"): the OCI runtime's create fails at StartContainer, " +
		"so RunContainerError"
	srcInvalidActionCRIO = "cri-o@v1.34.0 internal/config/seccomp/seccomp.go: (*Config).Setup → containers/common@v0.63.0 " +
		"pkg/seccomp/seccomp_linux.go LoadProfileFromBytes, setupSeccomp (actions copied verbatim, ValidateProfile never called); " +
		"server/container_create.go createContainerPlatform → internal/oci/runtime_oci.go (*runtimeOCI).CreateContainer " +
		"(\"container create failed: %s\"): the OCI runtime's create (runc@v1.1.15, runc@v1.5.2 ConvertStringToAction; crun 1.21 " +
		"libcrun_generate_seccomp) fails inside CreateContainer, so CreateContainerError (k8s.io/kubernetes v1.37.2 " +
		"pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer: ErrCreateContainer)"
	srcMissingProfileContainerd = "containerd@v1.7.24 and containerd/v2@v2.4.2 contrib/seccomp/seccomp.go: WithProfile " +
		"(\"cannot load seccomp profile\" with the path), a spec option of CreateContainer (pkg/cri/server/container_create.go; " +
		"internal/cri/server/container_create.go createContainer)"
	srcMissingProfileCRIO = "cri-o@v1.34.0 internal/config/seccomp/seccomp.go: (*Config).Setup (Localhost: os.ReadFile, " +
		"\"unable to load local profile %q\" with the path), wrapped \"setup seccomp: %w\" in server/container_create.go: CreateContainerError"
	srcNotLoadedContainerd = "containerd@v1.7.24 pkg/cri/server/container_create_linux.go: generateApparmorSpecOpts and " +
		"containerd/v2@v2.4.2 internal/cri/sputil/apparmor_linux.go: GenerateApparmorSpecOpts (appArmorProfileExists reads " +
		"/sys/kernel/security/apparmor/profiles: \"apparmor profile not found <p>\" in CreateContainer, before any OCI runtime)"
	srcNotLoadedCRIO = "cri-o@v1.34.0 internal/config/apparmor/apparmor_linux.go: (*Config).Apply (no check that a Localhost profile " +
		"is loaded); server/container_create.go createContainerPlatform → internal/oci/runtime_oci.go (*runtimeOCI).CreateContainer " +
		"(\"container create failed: %s\"); runc@v1.1.15, runc@v1.5.2 libcontainer/standard_init_linux.go (*linuxStandardInit).Init " +
		"(\"unable to apply apparmor profile\") → libcontainer/apparmor/apparmor_linux.go changeOnExec (write /proc/self/attr/apparmor/exec); " +
		"crun 1.21 src/libcrun/container.c container_init_setup → src/libcrun/utils.c set_apparmor_profile " +
		"(\"write file `/proc/thread-self/attr/apparmor/exec`\"): neither message names the profile"
)

// seccompEnforceRuntimes: both runtimes' default profiles block the probes;
// CRI-O's answers ENOSYS where containerd's answers EPERM.
func seccompEnforceRuntimes(base Rule) []RuntimeVariant {
	crio := base.Upstream[len(base.Upstream)-1].Obs
	crio.Summary = "RuntimeDefault container runs with Seccomp: 2 and a blocked syscall (e.g. unshare of a user namespace, " +
		"personality(ADDR_NO_RANDOMIZE)) fails with ENOSYS, CRI-O's default errno; Unconfined runs with Seccomp: 0"
	return variants(
		onRuntimes(containerdRead, ociRead, srcSeccompDefaultContainerd, nil),
		onRuntimes(crioRead, ociRead, srcSeccompDefaultCRIO, []Phase{seccompBeforeFieldsPhase,
			phase("seccomp GA; CRI-O's default profile answers ENOSYS", seccompFieldsOnwards, crio)}),
	)
}

// seccompNoSeccompRuntimes: failure row 1. The KEP allows both outcomes;
// the suite stages the row with a runtime handler whose OCI runtime drops
// the profile, so the OCI runtime decides there, whatever the CRI runtime.
// On a host without seccomp filters the CRI runtimes differ (see the
// sources); containerd's variant keeps the rule's phases.
func seccompNoSeccompRuntimes(base Rule) []RuntimeVariant {
	crio := base.Upstream[len(base.Upstream)-1].Obs
	crio.Summary = "pod created; on a host without seccomp filters CRI-O runs a RuntimeDefault container without a profile " +
		"(a warning in its log) and refuses a Localhost one; under an OCI runtime that lacks seccomp, that runtime decides: " +
		"it fails to start or runs without enforcement"
	return variants(
		onRuntimes(containerdRead, anyOCI, srcNoSeccompContainerd, nil),
		onRuntimes(crioRead, anyOCI, srcNoSeccompCRIO, []Phase{seccompBeforeFieldsPhase,
			phase("seccomp GA; CRI-O without seccomp runs RuntimeDefault unconfined", seccompFieldsOnwards, crio)}),
	)
}

// seccompInvalidActionRuntimes: failure row 3. The KEP's one outcome
// (fails to start, retried); the waiting reason tells where the runtime
// fails it.
func seccompInvalidActionRuntimes() []RuntimeVariant {
	crio := Observation{Summary: "pod created; CRI-O runs the OCI runtime's create inside CreateContainer, which refuses the action: " +
		"CreateContainerError, retried with back-off",
		Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError"}}
	return variants(
		onRuntimes(containerdRead, ociRead, srcInvalidActionContainerd, nil),
		onRuntimes(crioRead, ociRead, srcInvalidActionCRIO, []Phase{seccompBeforeFieldsPhase,
			phase("seccomp GA; CRI-O fails the create", seccompFieldsOnwards, crio)}),
	)
}

// seccompMissingProfileRuntimes: failure row 4, the same on both CRI
// runtimes (they fail before any OCI runtime runs).
func seccompMissingProfileRuntimes() []RuntimeVariant {
	return variants(
		onRuntimes(containerdRead, anyOCI, srcMissingProfileContainerd, nil),
		onRuntimes(crioRead, anyOCI, srcMissingProfileCRIO, nil),
	)
}

// appArmorNotLoadedRuntimes: AppArmor failure row 3. containerd refuses
// the profile itself, naming it; on CRI-O the OCI runtime fails at create
// with a message that does not name it.
func appArmorNotLoadedRuntimes() []RuntimeVariant {
	crio := Observation{Summary: "pod created; container fails to start (the OCI runtime cannot change to the profile at create), " +
		"retried with back-off; the message names the apparmor exec attribute, not the profile",
		Admission: Accepted, Container: &ContainerOutcome{State: Waiting, Reason: "CreateContainerError", MessageContains: "apparmor"}}
	return variants(
		onRuntimes(containerdRead, anyOCI, srcNotLoadedContainerd, nil),
		onRuntimes(crioRead, ociRead, srcNotLoadedCRIO, always("CRI-O does not check the profile; the OCI runtime fails at create", crio)),
	)
}

// withRuntimes sets the runtime variants of a rule built by a helper.
func withRuntimes(r Rule, vs func(Rule) []RuntimeVariant) Rule {
	r.Runtimes = vs(r)
	return r
}
