#!/usr/bin/env bash
# Builds the Flux CLI (github.com/fluxcd/flux2/v2, its cmd/flux) from its Go module and caches
# the binary in
#   ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/flux/v2.9.5/flux
# which is what testkit/fluxtest and docs/deploy-flux.md's recipe run (`flux build
# kustomization --dry-run`, `flux push artifact`, `flux pull artifact`).
#
# v2.9.5 is the newest release the module proxy serves; its go.mod says `go 1.26.0`, so it
# builds with this project's Go. It cannot be built with `go install module/cmd@version`: its
# go.mod has a replace directive (gopkg.in/yaml.v3), which `go install pkg@version` refuses, and
# cmd/flux embeds manifests/*.yaml (manifests.embed.go), the controllers' install manifests
# that flux2's Makefile generates (manifests/scripts/bundle.sh, downloading them) and that the
# module zip does not contain. So the module's source is copied into a scratch directory and
# built there as the main module, with its own go.mod and go.sum (the replace applies as
# upstream builds it), and manifests/ holds one placeholder file: only `flux install` and
# `flux bootstrap` read those manifests, and neither is run here. The version is stamped as
# flux2's Makefile and .goreleaser.yml stamp it (-X main.VERSION).
#
# Idempotent: a binary already present is not rebuilt. It is written under a temporary name
# and renamed into place; concurrent runs are serialised with flock (testkit/toolcache).
# Nothing outside the cache directory is modified (not the project's go.mod).
#
# Only the Go module proxy is needed. Measured cold on 2 busy cores: see docs/deploy-flux.md.
#
# Usage: testkit/fluxtest/build-flux.sh    (or `make flux`)
#   SPARKUI_CACHE   cache root (default $HOME/.cache/sparkui)
#
# Progress goes to stderr; the binary's path is printed on stdout at the end.
set -euo pipefail

FLUX_VERSION=v2.9.5

# shellcheck source=../toolcache/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../toolcache/toolcache.sh"
toolcache_init flux flux "flux/$FLUX_VERSION"

if have flux; then
	echo "$OUT/flux"
	exit 0
fi

toolcache_lock
if have flux; then # built by the run we waited for
	echo "$OUT/flux"
	exit 0
fi

export GOWORK=off GO111MODULE=on CGO_ENABLED=0 GOFLAGS=-buildvcs=false
t0=$SECONDS
log "downloading github.com/fluxcd/flux2/v2@$FLUX_VERSION"
moddir=$(go mod download -json "github.com/fluxcd/flux2/v2@$FLUX_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z "$moddir" || ! -f "$moddir/go.mod" ]]; then
	log "go mod download github.com/fluxcd/flux2/v2@$FLUX_VERSION gave no source directory"
	exit 1
fi
src="$ROOT/src-$FLUX_VERSION.$$"
tmp="$OUT/.flux.tmp.$$"
trap 'chmod -R u+w "$src" 2>/dev/null; rm -rf "$src" "$tmp"' EXIT
cp -R "$moddir" "$src"
chmod -R u+w "$src"
mkdir -p "$src/cmd/flux/manifests"
cat >"$src/cmd/flux/manifests/placeholder.yaml" <<'YAML'
# Built by sparkui's testkit/fluxtest/build-flux.sh without Flux's install manifests:
# `flux install` and `flux bootstrap` do not work with this binary.
YAML
log "building github.com/fluxcd/flux2/v2/cmd/flux@$FLUX_VERSION"
(cd "$src" && go build -trimpath -ldflags "-s -w -X main.VERSION=${FLUX_VERSION#v}" -o "$tmp" ./cmd/flux)
chmod 0755 "$tmp"
mv -f "$tmp" "$OUT/flux"
log "built in $((SECONDS - t0))s"
echo "$OUT/flux"
