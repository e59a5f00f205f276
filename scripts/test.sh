#!/usr/bin/env bash
# make test's three lanes, run at once:
# - builds and guests: the two packages that build kernels and boot QEMU guests, each a lane
#   of its own. Their figures are in virtual time (TCG with icount), which host load cannot
#   move, so they need no quiet CPU;
# - host: every other package, one at a time (-p 1: the integration tests measure on this
#   machine's clock and do not share the CPUs with each other), then a short fuzz of every
#   parser (make fuzz).
# The host lane's tests assert effects far larger than the noise of a busy machine, which the
# guest lane makes it. Each line is prefixed with its lane; the exit status is the first
# failing lane's. A lane's output is also kept whole in $NSPERF_TEST_LOGS (default: a
# temporary directory, removed at the end) for reading after a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZ=${FUZZ:-30000x}
builds=$($GO list ./cmd/nsperf/buildtest)
guests=$($GO list ./cmd/nsperf/guesttest)
host=$($GO list ./... | grep -v -E '/cmd/nsperf/(buildtest|guesttest)$' | tr '\n' ' ')

logs=${NSPERF_TEST_LOGS:-}
if [ -z "$logs" ]; then
	logs=$(mktemp -d)
	trap 'rm -rf "$logs"' EXIT
fi
mkdir -p "$logs"

lane() { # lane NAME COMMAND...: runs COMMAND with NAME before each line, its status in NAME.rc
	local name=$1
	shift
	("$@"; echo $? >"$logs/$name.rc") 2>&1 | tee "$logs/$name.log" | sed -u "s/^/[$name] /"
}

digest() { # digest NAME: a failed lane's failures again, at the end, for a log read from its
	# tail (CI keeps only its last lines): each failing test's line and the log go test prints
	# after it, panics, and the build errors of a package that did not compile.
	grep -A12 -E '^(\s*--- FAIL|panic:|fatal error:|# )' "$logs/$1.log" | grep -v -E '^(FAIL|ok|=== )' | head -n 40 | sed "s/^/[$1 failed] /"
}

lane builds $GO test -count=1 -timeout 30m "$builds" &
builds_pid=$!
lane guests $GO test -count=1 -timeout 30m "$guests" &
guests_pid=$!
# shellcheck disable=SC2086 # the package list is a word list
lane host bash -c "$GO test -count=1 -p 1 -timeout 30m $host && make --no-print-directory fuzz FUZZTIME=$FUZZ"
wait $builds_pid $guests_pid

status=0
for name in host builds guests; do
	rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
	if [ "$rc" != 0 ]; then
		digest "$name"
		echo "make test: the $name lane failed (exit $rc); its output: $logs/$name.log"
		[ "$status" != 0 ] || status=$rc
	fi
done
if [ "$status" != 0 ] && [ -z "${NSPERF_TEST_LOGS:-}" ]; then
	trap - EXIT # keep the logs of a failure
fi
exit "$status"
