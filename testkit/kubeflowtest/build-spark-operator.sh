#!/usr/bin/env bash
# Builds the kubeflow spark-operator (github.com/kubeflow/spark-operator/v2, its cmd/operator)
# from its Go module and caches the binary in
#   ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/spark-operator/v2.5.2/spark-operator
# which testkit/kubeflowtest runs as `spark-operator controller start` against the test control
# plane (testkit/testcluster), with a stand-in spark-submit (testkit/kubeflowtest/sparksubmit).
#
# It cannot be built with `go install module/cmd@version`: its go.mod has replace directives
# (every k8s.io module pinned to v0.32.5), which `go install pkg@version` refuses. So the
# module's source is copied into a scratch directory and built there as the main module, with
# its own go.mod and go.sum, as upstream's Makefile builds it (`go build cmd/operator/main.go`).
# The version is stamped as that Makefile stamps it (-X k8s.io/component-base/version.gitVersion).
#
# Idempotent: a binary already present is not rebuilt. It is written under a temporary name
# and renamed into place; concurrent runs are serialised with flock (testkit/toolcache).
# Nothing outside the cache directory is modified (not the project's go.mod).
#
# Only the Go module proxy is needed. Measured cold: see testkit/README.md.
#
# Usage: testkit/kubeflowtest/build-spark-operator.sh    (or `make spark-operator`)
#   SPARKUI_CACHE   cache root (default $HOME/.cache/sparkui)
#
# Progress goes to stderr; the binary's path is printed on stdout at the end.
set -euo pipefail

OPERATOR_VERSION=v2.5.2
MODULE=github.com/kubeflow/spark-operator/v2

# shellcheck source=../toolcache/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../toolcache/toolcache.sh"
toolcache_init spark-operator spark-operator "spark-operator/$OPERATOR_VERSION"

if have spark-operator; then
	echo "$OUT/spark-operator"
	exit 0
fi

toolcache_lock
if have spark-operator; then # built by the run we waited for
	echo "$OUT/spark-operator"
	exit 0
fi

export GOWORK=off GO111MODULE=on CGO_ENABLED=0 GOFLAGS=-buildvcs=false
t0=$SECONDS
log "downloading $MODULE@$OPERATOR_VERSION"
moddir=$(go mod download -json "$MODULE@$OPERATOR_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z "$moddir" || ! -f "$moddir/go.mod" ]]; then
	log "go mod download $MODULE@$OPERATOR_VERSION gave no source directory"
	exit 1
fi
src="$ROOT/src-$OPERATOR_VERSION.$$"
tmp="$OUT/.spark-operator.tmp.$$"
trap 'chmod -R u+w "$src" 2>/dev/null; rm -rf "$src" "$tmp"' EXIT
cp -R "$moddir" "$src"
chmod -R u+w "$src"
log "building $MODULE/cmd/operator@$OPERATOR_VERSION"
(cd "$src" && go build -trimpath \
	-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$OPERATOR_VERSION" \
	-o "$tmp" ./cmd/operator)
chmod 0755 "$tmp"
mv -f "$tmp" "$OUT/spark-operator"
log "built in $((SECONDS - t0))s"
echo "$OUT/spark-operator"
