#!/usr/bin/env bash
# Builds the distribution registry (github.com/distribution/distribution/v3, its cmd/registry:
# the registry Docker Hub and most self-hosted registries run) from its Go module and caches the
# binary in
#   ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/registry/v3.1.2/registry
# which is what testkit/imagetest pushes the images to and pulls them back from.
#
# v3.1.2 is the newest release the module proxy serves; its go.mod has no replace or exclude
# directive, so `go install module/cmd@version` builds it as published.
#
# Idempotent: a binary already present is not rebuilt, so a second run is instant. It is written
# under a temporary name and renamed into place, so an interrupted build never leaves a
# half-written binary behind. Concurrent runs are serialised with flock. Nothing outside the cache
# directory is modified (in particular not the project's go.mod).
#
# Only the Go module proxy is needed. Measured cold on 2 busy cores: see docs/images.md.
#
# Usage: testkit/registry/build-registry.sh    (or `make registry`)
#   SPARKUI_CACHE   cache root (default $HOME/.cache/sparkui)
#
# Progress goes to stderr; the binary's path is printed on stdout at the end.
set -euo pipefail

REGISTRY_VERSION=v3.1.2

# shellcheck source=../toolcache/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../toolcache/toolcache.sh"
toolcache_init registry registry "registry/$REGISTRY_VERSION"

if have registry; then
	echo "$OUT/registry"
	exit 0
fi

toolcache_lock
if have registry; then # built by the run we waited for
	echo "$OUT/registry"
	exit 0
fi

export GOWORK=off GO111MODULE=on CGO_ENABLED=0 GOFLAGS=-buildvcs=false
gobin="$ROOT/.gobin.$$"
trap 'rm -rf "$gobin"' EXIT
log "building github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
t0=$SECONDS
# The version the registry's own build stamps (its Makefile: -X .../version.version).
GOBIN="$gobin" go install -trimpath \
	-ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
	"github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
chmod 0755 "$gobin/registry"
mv -f "$gobin/registry" "$OUT/registry"
log "built in $((SECONDS - t0))s"
echo "$OUT/registry"
