#!/usr/bin/env bash
# Builds `kubectl sparkui` (./kubectlplugin, static, CGO off) once per platform of the Helm
# plugin (deploy/helm-plugin/package.sh's PLATFORMS) and packs each as the archive the krew
# manifest names, OUT/kubectl-sparkui_<os>_<arch>.tar.gz (the binary at its root, fixed
# owner and times so the archive's sha256 depends on the binary alone), then writes
# OUT/sparkui.yaml: deploy/krew/sparkui.yaml with VERSION and each archive's sha256.
#
# Usage: deploy/krew/package.sh   (or `make kubectl-plugin`)
#   VERSION     default: the VERSION file
#   PLATFORMS   default "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
#   OUT         default bin/kubectl-plugin
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION="${VERSION:-$(cat VERSION)}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
OUT="${OUT:-bin/kubectl-plugin}"

mkdir -p "$OUT"
stage="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
ldflags="-s -w -X github.com/sparkui/sparkui/internal/version.Version=$VERSION"
sed_args=(-e "s/@VERSION@/$VERSION/g")
for p in $PLATFORMS; do
	os="${p%/*}" arch="${p#*/}"
	mkdir -p "$stage/$os-$arch"
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "$ldflags" -o "$stage/$os-$arch/kubectl-sparkui" ./kubectlplugin
	archive="$OUT/kubectl-sparkui_${os}_${arch}.tar.gz"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage/$os-$arch" -cf - kubectl-sparkui | gzip -n >"$archive"
	sum="$(sha256sum "$archive" | cut -d' ' -f1)"
	sed_args+=(-e "s/@SHA256_${os}_${arch}@/$sum/")
	echo "$archive $sum"
done
sed "${sed_args[@]}" deploy/krew/sparkui.yaml >"$OUT/sparkui.yaml"
echo "$OUT/sparkui.yaml"
