// Package version is the one version of sparkui: the function injects the runtime image of
// the same version it was built as, so the two can never drift.
package version

// Version is set at build time with -ldflags "-X github.com/sparkui/sparkui/internal/version.Version=…"
// (the Makefile takes it from the VERSION file); the default matches that file.
var Version = "0.1.0"

// RuntimeRepository is where the runtime image is published.
const RuntimeRepository = "ghcr.io/sparkui/sparkui-runtime"

// RuntimeImage is the runtime image the function injects by default.
func RuntimeImage() string { return RuntimeRepository + ":" + Version }
