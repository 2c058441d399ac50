#!/usr/bin/env bash
# Builds a real Kubernetes control plane (kube-apiserver, kube-controller-manager,
# etcd) from Go modules and caches the binaries in
#   ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/control-plane/v1.37.2/
# which is what testkit/testcluster (envtest's BinaryAssetsDirectory) uses.
#
# `build.sh node` builds a node instead (kubelet, kube-scheduler, kube-proxy) from the
# same k8s.io/kubernetes module, in the same scratch module, into
#   ${SPARKUI_CACHE:-$HOME/.cache/sparkui}/node/v1.37.2/
# for testkit/testnode. Both share the Go build cache, so the node after the control
# plane compiles only the packages the control plane did not need.
#
# Idempotent: a binary already present is not rebuilt, so a second run is instant.
# Each binary is written under a temporary name and renamed into place, so an
# interrupted build never leaves a half-written binary behind.
#
# Nothing outside the cache directory is modified (in particular not the
# project's go.mod): the builds happen in scratch modules under the cache.
#
# Only the Go module proxy is needed. Measured cold on 2 busy cores (empty Go
# build cache, modules downloaded): etcd ~1 min, kube-apiserver ~9.5 min,
# kube-controller-manager ~2.5 min more; with a warm Go build cache each is
# seconds (link only). About 250 MB of binaries.
#
# `build.sh all` builds both sets with one `go build` of the six commands (what `make tools`
# runs): one module load, and one command's link overlaps the others' compiles instead of
# leaving a core idle.
#
# Usage: testkit/testcluster/build.sh         (or `make control-plane`)
#        testkit/testcluster/build.sh node    (or `make node`)
#        testkit/testcluster/build.sh all     (or `make kubernetes`)
#   SPARKUI_CACHE   cache root (default $HOME/.cache/sparkui)
#
# Progress goes to stderr; the binaries' directory is printed on stdout at the end.
set -euo pipefail

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2 # k8s.io/* staging modules are tagged v0.X.Y for Kubernetes v1.X.Y
ETCD_VERSION=v3.6.16

MODE="${1:-control-plane}"
case "$MODE" in
control-plane) WANT=(kube-apiserver kube-controller-manager etcd) ;;
node) WANT=(kubelet kube-scheduler kube-proxy) ;;
all) WANT=(kube-apiserver kube-controller-manager etcd kubelet kube-scheduler kube-proxy) ;;
*)
	echo "usage: $0 [control-plane|node|all]" >&2
	exit 2
	;;
esac

# ROOT holds the scratch modules and the lock for both modes; OUT the binaries of this one.
# shellcheck source=../toolcache/toolcache.sh
. "$(dirname "${BASH_SOURCE[0]}")/../toolcache/toolcache.sh"
if [[ "$MODE" == all ]]; then
	# Two output directories: the binaries go to control-plane/ or node/ by name (out_dir).
	toolcache_init kubernetes control-plane "control-plane/$K8S_VERSION"
	OUT_CP="$OUT"
	toolcache_init kubernetes control-plane "node/$K8S_VERSION"
	OUT_NODE="$OUT"
else
	toolcache_init "$MODE" control-plane "$MODE/$K8S_VERSION"
	OUT_CP="$OUT" OUT_NODE="$OUT"
fi

# out_dir NAME: where binary NAME lives.
out_dir() {
	case "$1" in
	kubelet | kube-scheduler | kube-proxy) echo "$OUT_NODE" ;;
	*) echo "$OUT_CP" ;;
	esac
}
have() { [[ -x "$(out_dir "$1")/$1" && -s "$(out_dir "$1")/$1" ]]; }

if have_all "${WANT[@]}"; then
	echo "$OUT"
	exit 0
fi

toolcache_lock
rm -rf "$ROOT"/.out.tmp.* # an interrupted one-go-build's directory (none can be in progress)

# The scratch modules are self-contained: no workspace, no vendor dir, module
# mode, no VCS stamping, static binaries.
export GOWORK=off GO111MODULE=on CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"

# build_into NAME PKG LDFLAGS: runs in the current (scratch module) directory.
build_into() {
	local name="$1" pkg="$2" ldflags="$3"
	if have "$name"; then
		log "$name: present, skipping"
		return 0
	fi
	local tmp
	tmp="$(out_dir "$name")/.$name.tmp.$$"
	# shellcheck disable=SC2064 # expand now: $tmp is local to this function
	trap "rm -f '$tmp'" EXIT
	log "$name: building $pkg"
	local start=$SECONDS
	go build -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg"
	chmod 0755 "$tmp"
	mv -f "$tmp" "$(out_dir "$name")/$name"
	trap - EXIT
	log "$name: built in $((SECONDS - start))s"
}

# build_kubernetes CMD...: the k8s.io/kubernetes commands CMD (cmd/CMD) into $OUT.
build_kubernetes() {
	if have_all "$@"; then
		log "$*: present, skipping"
		return 0
	fi
	local dir="$ROOT/build-k8s-$K8S_VERSION"
	mkdir -p "$dir"
	cd "$dir"

	# k8s.io/kubernetes's own go.mod replaces every staging module with
	# ./staging/src/k8s.io/..., which only exists in the kubernetes repository, not
	# in the module cache. Replace each of them with its published v0.X.Y instead.
	# The list is read from the published go.mod so it follows the version.
	local gomod
	gomod="$(cd "$ROOT" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
	if [[ -z "$gomod" || ! -f "$gomod" ]]; then
		log "could not locate the go.mod of k8s.io/kubernetes@$K8S_VERSION"
		exit 1
	fi

	# Every replace directive of k8s.io/kubernetes, as "OLD => NEW", single-line
	# form or block form.
	local replaces
	replaces="$(awk '
		/^replace[[:space:]]*\($/ { inblock = 1; next }
		inblock && /^\)/ { inblock = 0; next }
		inblock && /=>/ { sub(/\/\/.*/, ""); print; next }
		/^replace[[:space:]]/ && /=>/ { sub(/^replace[[:space:]]+/, ""); sub(/\/\/.*/, ""); print }
	' "$gomod")"

	local staging=() others=() line old new
	while IFS= read -r line; do
		[[ -z "${line//[[:space:]]/}" ]] && continue
		old="$(sed 's/[[:space:]]*=>.*//; s/^[[:space:]]*//' <<<"$line")"
		new="$(sed 's/.*=>[[:space:]]*//; s/[[:space:]]*$//' <<<"$line")"
		case "$new" in
		./staging/src/*)
			staging+=("${old%% *}")
			;;
		./* | ../*)
			log "unexpected local replace in k8s.io/kubernetes go.mod: $line"
			exit 1
			;;
		*)
			# A replace to another published module: the main module must repeat it.
			others+=("$old => $new")
			;;
		esac
	done <<<"$replaces"
	if ((${#staging[@]} == 0)); then
		log "found no staging replaces in $gomod"
		exit 1
	fi
	log "replacing ${#staging[@]} staging modules with $STAGING_VERSION${others[*]:+; other replaces: ${others[*]}}"

	{
		echo "// Generated by testkit/testcluster/build.sh: scratch module to build the"
		echo "// Kubernetes control plane binaries. Do not edit; it is rewritten on each run."
		echo "module sparkui.local/build-k8s"
		echo
		echo "go 1.26.0"
		echo
		echo "godebug default=go1.26"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		echo "replace ("
		local m
		for m in "${staging[@]}"; do
			printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"
		done
		for m in "${others[@]}"; do
			printf '\t%s\n' "$m"
		done
		echo ")"
	} >go.mod.new
	# Keep go.sum across runs; only rewrite go.mod when it changed.
	if ! cmp -s go.mod.new go.mod.gen 2>/dev/null; then
		cp go.mod.new go.mod
		cp go.mod.new go.mod.gen
	fi
	rm -f go.mod.new

	# Every command either mode builds, so go.mod and go.sum are the same for both and the
	# second mode reuses the first one's resolution and compiled packages.
	cat >tools.go <<'EOF'
//go:build tools

// Package tools pins the commands this scratch module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
EOF

	log "resolving k8s.io/kubernetes@$K8S_VERSION dependencies (go mod tidy)"
	local t0=$SECONDS
	go mod tidy
	log "resolved in $((SECONDS - t0))s"

	# Version stamping as Kubernetes' own build does (hack/lib/version.sh), so
	# /version reports v1.37.2 instead of v0.0.0-master.
	local minor="${K8S_VERSION#v1.}"
	minor="${minor%%.*}"
	local ld="-s -w"
	local p
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done

	# One go build for every missing command: a directory -o takes several main packages.
	local c pkgs=() names=()
	for c in "$@"; do
		if have "$c"; then
			log "$c: present, skipping"
		else
			names+=("$c")
			pkgs+=("k8s.io/kubernetes/cmd/$c")
		fi
	done
	local tmp="$ROOT/.out.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$tmp'" EXIT
	log "building ${names[*]}"
	local start=$SECONDS
	go build -trimpath -ldflags "$ld" -o "$tmp/" "${pkgs[@]}"
	for c in "${names[@]}"; do
		chmod 0755 "$tmp/$c"
		mv -f "$tmp/$c" "$(out_dir "$c")/$c"
	done
	rm -rf "$tmp"
	trap - EXIT
	log "${names[*]}: built in $((SECONDS - start))s"
}

build_etcd() {
	if have etcd; then
		log "etcd: present, skipping"
		return 0
	fi
	local dir="$ROOT/build-etcd-$ETCD_VERSION"
	mkdir -p "$dir"
	cd "$dir"
	cat >go.mod.new <<EOF
// Generated by testkit/testcluster/build.sh: scratch module to build etcd.
module sparkui.local/build-etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
EOF
	if ! cmp -s go.mod.new go.mod.gen 2>/dev/null; then
		cp go.mod.new go.mod
		cp go.mod.new go.mod.gen
	fi
	rm -f go.mod.new
	cat >main.go <<'EOF'
// Command etcd is etcd's server, built from go.etcd.io/etcd/server/v3.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
	log "resolving go.etcd.io/etcd/server/v3@$ETCD_VERSION dependencies (go mod tidy)"
	local t0=$SECONDS
	go mod tidy
	log "resolved in $((SECONDS - t0))s"
	build_into etcd . "-s -w"
}

total=$SECONDS
case "$MODE" in
control-plane)
	# etcd first: it is quick, and a partial cache is still useful for looking around.
	(build_etcd)
	(build_kubernetes kube-apiserver kube-controller-manager)
	;;
node) (build_kubernetes "${WANT[@]}") ;;
all)
	(build_etcd)
	(build_kubernetes kube-apiserver kube-controller-manager kubelet kube-scheduler kube-proxy)
	;;
esac
log "done in $((SECONDS - total))s"

for b in "${WANT[@]}"; do
	if ! have "$b"; then
		log "missing $(out_dir "$b")/$b after the build"
		exit 1
	fi
done
echo "$OUT"
