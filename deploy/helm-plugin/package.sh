#!/usr/bin/env bash
# Packages the sparkui Helm 4 post-renderer plugin once per platform with the real
# `helm plugin package`: OUT/<os>-<arch>/sparkui-<VERSION>.tgz, each holding sparkui/plugin.yaml
# (that platform's platformCommand only: deploy/helm-plugin/stage) and sparkui/bin/sparkui-fn
# (static, CGO off). Helm names the tarball <name>-<version>.tgz whatever the platform
# (helm.sh/helm/v4 pkg/cmd/plugin_package.go), hence one directory per platform; renaming the
# file would break a signature, whose provenance names it.
#
# Unsigned by default (--sign=false: Helm prints a warning). With SIGN_KEY set, each tarball
# is signed with that key from the secret keyring KEYRING (default ~/.gnupg/secring.gpg, Helm's
# default) and gets its .prov beside it; `helm plugin install` verifies a tarball's .prov by
# default and refuses one without (pkg/cmd/plugin_install.go).
#
# Usage: deploy/helm-plugin/package.sh   (or `make helm-plugin`)
#   HELM        the helm binary (required: make helm-plugin passes the one `make helm` builds)
#   VERSION     plugin version (default: the VERSION file)
#   PLATFORMS   default "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"
#   OUT         default bin/helm-plugin
#   SIGN_KEY, KEYRING, PASSPHRASE_FILE   signing (helm plugin package --key, --keyring, --passphrase-file)
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${HELM:?HELM must name the helm binary (make helm-plugin builds it: make helm)}"
VERSION="${VERSION:-$(cat VERSION)}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
OUT="${OUT:-bin/helm-plugin}"

sign=(--sign=false)
if [[ -n "${SIGN_KEY:-}" ]]; then
	sign=(--sign --key "$SIGN_KEY" --keyring "${KEYRING:-$HOME/.gnupg/secring.gpg}")
	[[ -n "${PASSPHRASE_FILE:-}" ]] && sign+=(--passphrase-file "$PASSPHRASE_FILE")
fi

mkdir -p "$OUT"
stage="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
go build -o "$stage/stage" ./deploy/helm-plugin/stage
ldflags="-s -w -X github.com/sparkui/sparkui/internal/version.Version=$VERSION"
for p in $PLATFORMS; do
	os="${p%/*}" arch="${p#*/}"
	dir="$stage/$os-$arch/sparkui"
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "$ldflags" -o "$stage/sparkui-fn-$os-$arch" ./fn
	"$stage/stage" -platform "$p" -version "$VERSION" -binary "$stage/sparkui-fn-$os-$arch" -out "$dir" deploy/helm-plugin/plugin.yaml
	rm -rf "${OUT:?}/$os-$arch"
	"$HELM" plugin package "$dir" "${sign[@]}" -d "$OUT/$os-$arch"
done
