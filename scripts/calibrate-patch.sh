#!/usr/bin/env bash
# make calibrate-patch (and the end of make bench): how small a change virtual time decides.
#
# scripts/calibration/veth-xmit-cost.patch.in makes veth_xmit run an empty loop of LOOPS
# iterations (about 3 instructions each) per packet sent. For each size in LOOPS (default
# 30 60 120 240: about 0.25%, 0.5%, 1% and 2% of the instructions of a 48 KB packet of
# veth-bigtcp's "off" state; half of that in "on", whose packets are 126 KB), the patch is
# measured as the A/B of `nsperf run SCENARIO --patch` (Debian's 6.12 as the base, in QEMU in
# virtual time, RUNS runs of 2 s per state and workload). First an A/A of the base image
# (AA=false leaves it out) sets the floor those A/Bs decide with (docs/method.md, "Virtual
# time: repeatability and the floor").
#
# Prints one line per size and comparison (STATE@B against STATE@A): the change of the median
# throughput, p and the verdict; then how many comparisons each size decided (regressed).
# The builds are cached (nsperf build); the first takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIO=${SCENARIO:-veth-bigtcp}
LOOPS=${LOOPS:-30 60 120 240}
RUNS=${RUNS:-5}
AA=${AA:-true}
bin=./bin/nsperf
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--runs "$RUNS" --duration 2s --omit 0s --vm-accel tcg --vm-clock virtual --no-history)

# rows FILE: the throughput comparisons of kernel B's states with A's (csv: workload, state,
# change, p, verdict).
rows() {
	local csv rc=0
	# report exits 1 for a result that fails (a regression): what the larger costs must do.
	csv=$("$bin" report "$1" --format csv 2>/dev/null) || rc=$?
	[ "$rc" -le 1 ] || return "$rc"
	printf '%s\n' "$csv" | awk -F, '$3=="throughput" && $15 ~ /@A$/ {printf "%-6s %-8s %+7.2f%%  p=%.3f  %s\n", $2, $5, 100*$16, $19, $20}'
}

if [ "$AA" = true ]; then
	# The base's image and modules: fetched into the cache by the first build.
	sed 's/@LOOPS@/1/g' scripts/calibration/veth-xmit-cost.patch.in >"$dir/warm.patch"
	"$bin" build --patch "$dir/warm.patch" >/dev/null
	image=$(ls /var/cache/nsperf/kernels/sources/debian-*/image/boot/vmlinuz-* | tail -1)
	modules=${image%/boot/*}
	echo "calibrate-patch: A/A of $SCENARIO on $(basename "$image") (one image in two guests)"
	rc=0
	"$bin" run "$SCENARIO" --kernel "$image" --kernel "$image" --modules "$modules" "${common[@]}" --out "$dir/aa.json" >"$dir/aa.txt" 2>"$dir/aa.log" || rc=$?
	grep '^A/A:' "$dir/aa.log" || { echo "calibrate-patch: the A/A failed (exit $rc):" >&2; tail -5 "$dir/aa.log" >&2; exit 1; }
	rows "$dir/aa.json" | sed 's/^/  A\/A  /'
fi

for n in $LOOPS; do
	sed "s/@LOOPS@/$n/g" scripts/calibration/veth-xmit-cost.patch.in >"$dir/cost-$n.patch"
	rc=0
	"$bin" run "$SCENARIO" --patch "$dir/cost-$n.patch" "${common[@]}" --out "$dir/cost-$n.json" >"$dir/cost-$n.txt" 2>"$dir/cost-$n.log" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "calibrate-patch: $n loops failed (exit $rc):" >&2
		tail -5 "$dir/cost-$n.log" >&2
		exit "$rc"
	fi
	# "min change 0.7%" or "min change of each series its own, at most 1.39%"
	floor=$(sed -n 's/^gated metrics.*; \(min change[^:]*\):.*/\1/p' "$dir/cost-$n.txt" | head -1)
	rows "$dir/cost-$n.json" | sed "s/^/  $n loops  /"
	decided=$(rows "$dir/cost-$n.json" | grep -c ' regressed$' || true)
	total=$(rows "$dir/cost-$n.json" | wc -l)
	echo "$n loops: $decided of $total comparisons regressed ($floor)"
done
