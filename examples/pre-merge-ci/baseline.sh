#!/bin/sh
# baseline.sh OVERLAY [BASE_REF]: what applying this branch's rendering of OVERLAY does to the
# applications the base branch's rendering runs (sparkui-fn validate --baseline,
# docs/upgrading.md). Renders BASE_REF (default origin/main) in a throwaway git worktree and
# the working tree, then compares; exit 1 when the API server would refuse an apply (a Job's
# template), 0 otherwise with the restarts and next runs listed. OUTPUT=sarif for code scanning.
# Needs kustomize and sparkui-fn on the PATH, run from the repository's root, the overlays'
# exec path pointing at bin/sparkui-fn (not committed): the base is rendered with
# $BASE_BIN/sparkui-fn (default: this checkout's bin). For a pull request that upgrades sparkui,
# BASE_BIN must hold the base's version (GOBIN=/tmp/base-bin go install ...@<base version>):
# the cluster runs what that version rendered.
set -eu
overlay=${1:?usage: baseline.sh OVERLAY [BASE_REF]}
base=${2:-origin/main}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
[ -e "$tmp/base/bin" ] || ln -s "$(cd "${BASE_BIN:-bin}" && pwd)" "$tmp/base/bin"
kustomize build --enable-alpha-plugins --enable-exec "$tmp/base/$overlay" > "$tmp/main.yaml"
kustomize build --enable-alpha-plugins --enable-exec "$overlay" > "$tmp/change.yaml"
sparkui-fn validate --baseline "$tmp/main.yaml" "$tmp/change.yaml" --output "${OUTPUT:-text}"
