// Package version holds sparkui's two versions: the programs' own (Version, every release) and
// the runtime contract's (RuntimeContract, only by a recorded decision). The function writes
// the runtime image of the contract it writes for, never its own version, so that the same
// input and configuration give byte-identical output whatever sparkui-fn's version: the kubeflow
// operator deletes and resubmits an application on any spec change (design.md, section 2).
package version

// Version is set at build time with -ldflags "-X github.com/sparkui/sparkui/internal/version.Version=…"
// (the Makefile takes it from the VERSION file); the default matches that file.
var Version = "0.1.0"

// RuntimeContract is the version of what the injected sidecar needs and understands: its
// image, args, env, probe, mounts and the driver's preStop hook. MAJOR.MINOR: a minor adds
// settings an older runtime of the same major can safely ignore; a major is needed to remove
// or rename one, or to add one an older runtime must not ignore (docs/runtime-contract.md).
// Changing it is a decision recorded in CHANGELOG.md's runtime-contract section, and
// fn/contract_test.go fails when the injected fields change without it. A const, not a var:
// no -X flag can move it.
const RuntimeContract = "1.2"

// RuntimeRepository is where the runtime image is published.
const RuntimeRepository = "ghcr.io/sparkui/sparkui-runtime"

// RuntimeTagPrefix starts the tag of a contract's runtime image, `contract-<MAJOR.MINOR>`: a
// name space of its own, so that it is never taken for a sparkui release tag (`0.1.0`), and
// published once per contract by the release that declares it (`make image-tar`,
// docs/images.md).
const RuntimeTagPrefix = "contract-"

// RuntimeTag is the tag of the runtime image of contract c.
func RuntimeTag(c string) string { return RuntimeTagPrefix + c }

// RuntimeImage is the runtime image the function injects by default: the current contract's.
func RuntimeImage() string { return RuntimeRepository + ":" + RuntimeTag(RuntimeContract) }
