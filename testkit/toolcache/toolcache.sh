# Sourced (not run) by the scripts that build the test tools from their Go modules into the
# cache (testkit/testcluster/build.sh, testkit/gatewaytest/build-traefik.sh,
# testkit/registry/build-registry.sh): where a tool's binaries go, whether they are there, and
# the lock that serialises concurrent builds (`make -j`, a test run started by hand).
#
# toolcache_init TAG ROOTNAME OUTREL: sets ROOT=$CACHE/ROOTNAME (scratch modules, the lock) and
# OUT=$CACHE/OUTREL (the binaries), both created and made absolute, and log() with [TAG].
# have NAME: the binary NAME is in $OUT. have_all NAME...: all of them are.
# toolcache_lock: takes $ROOT/.build.lock, waiting (and saying so) while another build holds it;
# then drops the temporary files an interrupted build left in $OUT (none can be in progress).

toolcache_init() {
	local tag="$1"
	CACHE="${SPARKUI_CACHE:-$HOME/.cache/sparkui}"
	ROOT="$CACHE/$2"
	OUT="$CACHE/$3"
	mkdir -p "$OUT" "$ROOT"
	OUT="$(cd "$OUT" && pwd)"
	ROOT="$(cd "$ROOT" && pwd)"
	TOOLCACHE_TAG="$tag"
}

log() { printf '[%s] %s\n' "$TOOLCACHE_TAG" "$*" >&2; }

have() { [[ -x "$OUT/$1" && -s "$OUT/$1" ]]; }

have_all() {
	local b
	for b in "$@"; do
		have "$b" || return 1
	done
}

toolcache_lock() {
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$ROOT/.build.lock"
		if ! flock -n 9; then
			log "another build holds $ROOT/.build.lock; waiting"
			flock 9
		fi
	fi
	rm -f "$OUT"/.*.tmp.*
}
