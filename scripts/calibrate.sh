#!/usr/bin/env bash
# make calibrate: N short A/A runs (the free state against a copy of itself) and the
# token-bucket check; prints the run-level false-alarm rate and whether the change a token
# bucket at half the measured rate must cause lies inside the reported 95% CI.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20}
bin=./bin/nsperf
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scenario="$dir/calibrate.yaml"

# A/A: only the free state, twice (--aa); a run exits 1 when a gated comparison regressed.
sed 's/RATE/1gbit/' scripts/calibrate.yaml >"$scenario"
alarms=0
medians=()
for i in $(seq 1 "$N"); do
	rc=0
	"$bin" run "$scenario" --aa --no-history --out "$dir/aa$i.json" --format csv >"$dir/aa$i.csv" 2>"$dir/aa$i.log" || rc=$?
	case $rc in
	0) ;;
	1) alarms=$((alarms + 1)) ;;
	*) echo "calibrate: A/A run $i failed (exit $rc):" >&2; tail -5 "$dir/aa$i.log" >&2; exit "$rc" ;;
	esac
	# The free state's throughput median (bit/s): csv columns case,workload,metric,unit,state,n,mean,median,...
	medians+=("$(awk -F, '$2=="tcp4" && $3=="throughput" && $5=="free" {print $8; exit}' "$dir/aa$i.csv")")
	printf 'A/A run %2d of %d: exit %d\n' "$i" "$N" "$rc"
done
median=$(printf '%s\n' "${medians[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "A/A: $alarms of $N runs alarmed (false-alarm rate $(awk -v a="$alarms" -v n="$N" 'BEGIN {printf "%.0f%%", 100*a/n}'); a sound method alarms in at most 5%)"

# The token bucket at half the free median: the change must lie in the CI.
rate=$(awk -v m="$median" 'BEGIN {printf "%dmbit", m/2/1e6}')
sed "s/RATE/$rate/" scripts/calibrate.yaml >"$scenario"
rc=0
"$bin" run "$scenario" --no-history --out "$dir/tbf.json" --format csv >"$dir/tbf.csv" 2>"$dir/tbf.log" || rc=$?
if [ "$rc" -gt 1 ]; then
	echo "calibrate: tbf run failed (exit $rc):" >&2; tail -5 "$dir/tbf.log" >&2; exit "$rc"
fi
awk -F, -v rate="$rate" -v free="$median" '
	$2=="tcp4" && $3=="throughput" && $5=="capped" {
		expected = (rate+0)*1e6 / free - 1
		printf "tbf at %s (half the free median %.3f Gbit/s): change %+.1f%% [%+.1f%%, %+.1f%%] %s; the cap alone predicts %+.1f%%: %s\n",
			rate, free/1e9, 100*$(NF-4), 100*$(NF-3), 100*$(NF-2), $NF, 100*expected,
			(expected >= $(NF-3) && expected <= $(NF-2)) ? "inside the CI" : "OUTSIDE the CI"
	}' "$dir/tbf.csv"
