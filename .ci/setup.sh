#!/usr/bin/env bash
# Installs the Debian packages the test suite runs, and nothing else: the one list of them.
# `make test` (and so .ci/run) runs it first; `make setup` runs it alone.
#
# As root it installs only the packages whose binary is missing (one apt-get update, one
# apt-get install). Without root, when something is missing, it stops at once and prints the
# one command that would install it. With everything present it only checks (no network).
#
# The tools built from Go modules (kustomize, the control plane, the node, Traefik, the
# registry, crane, helm, flux, staticcheck) are not here: `make tools` builds them.
#
# The NEEDS table is read by testkit/setupcheck's test: every binary a test or testkit execs by
# name must be provided by a row, and every row must be run by a test or testkit. Columns: the
# binary (or an absolute file) whose presence means the package is installed, the Debian
# package, who runs it.
set -euo pipefail

NEEDS='
kpt                        google-cloud-cli-kpt         examples, catalog, fn (validate mode), testkit/imagetest
kubectl                    kubectl                      runtime/blackbox, examples (apply, diff, dry runs)
git                        git                          catalog, testkit/imagetest (the image revision)
make                       make                         testkit/imagetest (make image-tar), make itself
ip                         iproute2                     runtime/blackbox (loopback in a Pod-like netns), testkit/testnode
unshare                    util-linux                   runtime/blackbox, testkit/testnode (own namespaces)
nsenter                    util-linux                   testkit/testnode
containerd                 containerd                   testkit/imagetest, testkit/testnode
ctr                        containerd                   testkit/imagetest, testkit/testnode
containerd-shim-runc-v2    containerd                   testkit/imagetest (containerd runs the image through it)
runc                       runc                         testkit/imagetest, testkit/testnode (containerd runtime)
/usr/lib/cni/bridge        containernetworking-plugins  testkit/testnode (bridge, host-local, loopback)
iptables                   iptables                     testkit/testnode (kube-proxy Service rules in the node netns)
podman                     podman                       testkit/imagetest (kpt fn eval --image)
skopeo                     skopeo                       testkit/imagetest (push to the registry)
gpg                        gnupg                        deploy/helm-plugin (signed plugin package)
'

present() {
	case "$1" in
	/*) [[ -e "$1" ]] ;;
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

missing=()
while read -r bin pkg _; do
	[[ -z "$bin" ]] && continue
	present "$bin" && continue
	[[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
done <<<"$NEEDS"

if ((${#missing[@]} == 0)); then
	echo "== setup: every package the tests run is installed"
	exit 0
fi

# --no-install-recommends: podman's and containerd's recommends (a second runtime, rootless
# helpers, man pages) are not used by the tests and double the download.
install="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ "$(id -u)" != 0 ]]; then
	echo "setup: the tests need Debian packages that are not installed: ${missing[*]}" >&2
	echo "run as root:  apt-get update && $install" >&2
	exit 1
fi

echo "== setup: apt-get update && $install"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # the package names are words
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

left=()
while read -r bin pkg _; do
	[[ -z "$bin" ]] && continue
	present "$bin" || left+=("$bin ($pkg)")
done <<<"$NEEDS"
if ((${#left[@]} > 0)); then
	echo "setup: still missing after the install: ${left[*]}" >&2
	exit 1
fi
