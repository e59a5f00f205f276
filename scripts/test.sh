#!/usr/bin/env bash
# make test's three lanes, run at once (make test installs what is missing first):
# - builds and guests: the two packages that build kernels and boot QEMU guests, each a lane
#   of its own. Their figures are in virtual time (TCG with icount), which host load cannot
#   move, so they need no quiet CPU;
# - host: lint and the OVS models check (make lint models-check), then every other package,
#   one at a time (-p 1: the integration tests measure on this machine's clock and do not
#   share the CPUs with each other); with FUZZ set (a count such as 3000x), then a short fuzz
#   of every parser (make fuzz). Without it each fuzz target runs on its seeds and
#   testdata/fuzz only, as part of go test (the Makefile's TESTFUZZ says why).
# The host lane's tests assert effects far larger than the noise of a busy machine, which the
# guest lane makes it. Each line is prefixed with its lane; the exit status is the first
# failing lane's. A lane's output is also kept whole in $NSPERF_TEST_LOGS (default: a
# temporary directory, removed at the end) for reading after a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZ=${FUZZ:-}
builds=$($GO list ./cmd/nsperf/buildtest)
guests=$($GO list ./cmd/nsperf/guesttest)
host=$($GO list ./... | grep -v -E '/cmd/nsperf/(buildtest|guesttest)$' | tr '\n' ' ')

logs=${NSPERF_TEST_LOGS:-}
if [ -z "$logs" ]; then
	logs=$(mktemp -d) # removed at the end unless a lane failed
fi
mkdir -p "$logs"

# Each lane's go test -timeout: at least twice the lane's time on a fresh machine of CI's kind
# (2 vCPUs, every cache empty), which the table at the end shows against it. The guests lane
# took 31 minutes warm with other work beside it (docs/development.md): 70 minutes, within
# CI's 90.
declare -A limit=([host]=50m [builds]=75m [guests]=70m)

# The reader of go test -json: a lane's output as plain go test prints it, and each test's time.
tl="$logs/testlanes"
$GO build -o "$tl" ./scripts/testlanes || exit 1

# The CPU each lane's processes use, for the table: a cgroup of the lane's own (cgroup v2's
# cpu.stat, else v1's cpuacct), which counts every descendant, sandboxed builds and guests
# included. Without one (no root, no cgroup file system) the table has no CPU figure.
cgroot=
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cgroot=/sys/fs/cgroup
elif [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
	cgroot=/sys/fs/cgroup/cpuacct
fi
removecgroups() { # the lanes' cgroups, each empty once its lane ended
	[ -z "$cgroot" ] || rmdir "$cgroot"/nsperf-test-$$-* 2>/dev/null
}
trap 'removecgroups; [ -n "${NSPERF_TEST_LOGS:-}" ] || [ "${keep_logs:-}" = yes ] || rm -rf "$logs"' EXIT

cpuseconds() { # cpuseconds CGROUP: the CPU seconds its processes used
	if [ -f "$1/cpu.stat" ]; then
		awk '$1 == "usage_usec" {printf "%.1f\n", $2 / 1e6}' "$1/cpu.stat"
	else
		awk '{printf "%.1f\n", $1 / 1e9}' "$1/cpuacct.usage"
	fi
}

lane() { # lane NAME COMMAND...: runs COMMAND with NAME before each line, its status in NAME.rc
	local name=$1 start=$SECONDS cg=
	shift
	if [ -n "$cgroot" ] && mkdir -p "$cgroot/nsperf-test-$$-$name" 2>/dev/null; then
		cg=$cgroot/nsperf-test-$$-$name
	fi
	(
		[ -z "$cg" ] || echo "$BASHPID" >"$cg/cgroup.procs" 2>/dev/null || true
		"$@"
		echo $? >"$logs/$name.rc"
	) 2>&1 | tee "$logs/$name.log" | sed -u "s/^/[$name] /"
	echo $((SECONDS - start)) >"$logs/$name.secs"
	[ -z "$cg" ] || cpuseconds "$cg" >"$logs/$name.cpu"
}

gotest() { # gotest NAME ARGS...: go test -json ARGS with the lane's limit, read by testlanes
	local name=$1
	shift
	set -o pipefail
	$GO test -json -count=1 -timeout "${limit[$name]}" "$@" 2>&1 | "$tl" filter -times "$logs/$name.times" -cgroup "${cg:-}"
}

digest() { # digest NAME: a failed lane's failures again, at the end, for a log read from its
	# tail (CI keeps only its last lines): each failing test's line and the log go test prints
	# after it, panics, and the build errors of a package that did not compile.
	grep -A12 -E '^(\s*--- FAIL|panic:|fatal error:|# )' "$logs/$1.log" | grep -v -E '^(FAIL|ok|=== )' | head -n 40 | sed "s/^/[$1 failed] /"
}

# The two slow lanes' test binaries and nsperf, compiled once before the lanes start: go
# commands running at once on a cold build cache each compile the packages they share (no
# process waits for another's), and these two import nearly all of nsperf and its modules.
echo "make test: compiling the builds and guests lanes' tests and nsperf"
$GO test -c -o "$logs/bin/" "$builds" "$guests" && $GO build -o "$logs/bin/nsperf" ./cmd/nsperf || exit 1

lane builds gotest builds "$builds" &
builds_pid=$!
lane guests gotest guests "$guests" &
guests_pid=$!
host_lane() {
	make --no-print-directory lint models-check || return 1
	# shellcheck disable=SC2086 # the package list is a word list
	gotest host -p 1 $host || return 1
	[ -z "$FUZZ" ] || make --no-print-directory fuzz FUZZTIME="$FUZZ"
}
lane host host_lane
wait $builds_pid $guests_pid

"$tl" table -logs "$logs" host:${limit[host]} builds:${limit[builds]} guests:${limit[guests]}

status=0
for name in host builds guests; do
	rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
	if [ "$rc" != 0 ]; then
		digest "$name"
		echo "make test: the $name lane failed (exit $rc); its output: $logs/$name.log"
		[ "$status" != 0 ] || status=$rc
	fi
done
if [ "$status" != 0 ]; then
	keep_logs=yes # the logs of a failure stay for reading
fi
exit "$status"
