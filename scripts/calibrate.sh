#!/usr/bin/env bash
# make calibrate: how often nsperf cries wolf, and how noisy a state is.
#
# MODE=host (default): N short A/A runs (the free state against a copy of itself), then the
# token-bucket check: whether the change a token bucket at half the measured rate must cause
# lies inside the reported 95% CI.
# MODE=guest: the same A/A runs, each in a guest on KERNEL (default: the test kernel,
# scripts/test-kernel.sh), then N A/B runs of that kernel against itself (two guests taking
# turns). PIN=false runs the guests unpinned (--vm-pin=false), for the before/after figures;
# AB=false leaves out the A/B runs. CLOCK=virtual (default) or wall is the guests' --vm-clock.
# In virtual time two more series follow (LADDER=false and LOAD=false leave them out):
#   the ladder: 5 runs per state of a tbf at 0.99, 0.98, 0.95 and 0.90 of the free rate
#   against one at 10 gbit (both states behind a tbf, so that only the rate differs: the
#   qdisc's own instructions count in virtual time), the smallest change decided;
#   the load test: one A/A run quiet and one with a busy loop on every host CPU, medians side
#   by side.
#
# For each series: the runs that alarmed (exit 1: a gated comparison regressed or improved
# between identical things) and the throughput CV of each state (median and range over runs).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20}
MODE=${MODE:-host}
PIN=${PIN:-true}
bin=./bin/nsperf
dir=$(mktemp -d)
hogs=() # busy loops of the load test, ended on every exit
trap '[ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null; rm -rf "$dir"' EXIT
aa="$dir/calibrate.yaml"
sed 's/RATE/1gbit/' scripts/calibrate.yaml >"$aa"

# series NAME ARGS...: N runs of nsperf run ARGS; prints each run's exit, then the alarms and
# the CV per state of the tcp4 throughput.
series() {
	local name=$1 alarms=0 rc i
	shift
	: >"$dir/cv"
	for i in $(seq 1 "$N"); do
		rc=0
		"$bin" run "$@" --no-history --out "$dir/r.json" --format csv >"$dir/r.csv" 2>"$dir/r.log" || rc=$?
		case $rc in
		0) ;;
		1) alarms=$((alarms + 1)) ;;
		*)
			echo "calibrate: $name run $i failed (exit $rc):" >&2; tail -5 "$dir/r.log" >&2
			# A guest's console log says why (a panic of the kernel under test): kept.
			for log in "$dir"/r.json.*.console.log; do
				[ -f "$log" ] && cp "$log" "calibrate-$(basename "$log")" && echo "calibrate: kept calibrate-$(basename "$log")" >&2
			done
			exit "$rc" ;;
		esac
		# csv columns: case,workload,metric,unit,state,n,mean,median,median_lo,median_hi,stddev,cv,...
		awk -F, '$2=="tcp4" && $3=="throughput" {print $5, $12, $8}' "$dir/r.csv" >>"$dir/cv"
		# CV_OUT=FILE keeps every run's figures (series, pinning, state, CV, median, exit).
		if [ -n "${CV_OUT:-}" ]; then
			awk -F, -v s="${name// /_}" -v pin="$PIN" -v rc="$rc" '$2=="tcp4" && $3=="throughput" {print s, pin, $5, $12, $8, rc}' "$dir/r.csv" >>"$CV_OUT"
		fi
		printf '%s run %2d of %d: exit %d\n' "$name" "$i" "$N" "$rc"
	done
	echo "$name: $alarms of $N runs alarmed (false-alarm rate $(awk -v a="$alarms" -v n="$N" 'BEGIN {printf "%.0f%%", 100*a/n}'); a sound method alarms in at most 5%)"
	sort -k1,1 -k2,2g "$dir/cv" | awk -v name="$name" '
		function flush() { if (n) printf "%s: %s throughput CV median %.1f%% (%.1f-%.1f%% over %d runs)\n", name, state, 100*v[int((n+1)/2)], 100*v[1], 100*v[n], n }
		$1 != state { flush(); state = $1; n = 0 }
		{ v[++n] = $2 }
		END { flush() }'
}

host() {
	series "A/A" "$aa" --aa
	local median rc=0
	median=$(awk '$1=="free" {print $3}' "$dir/cv" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	# The token bucket at half the free median: the change must lie in the CI.
	local rate
	rate=$(awk -v m="$median" 'BEGIN {printf "%dmbit", m/2/1e6}')
	sed "s/RATE/$rate/" scripts/calibrate.yaml >"$dir/tbf.yaml"
	"$bin" run "$dir/tbf.yaml" --no-history --out "$dir/tbf.json" --format csv >"$dir/tbf.csv" 2>"$dir/tbf.log" || rc=$?
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
}

guest() {
	local kernel=${KERNEL:-} modules=${MODULES:-}
	if [ -z "$kernel" ]; then
		bash scripts/test-kernel.sh /var/cache/nsperf-test-kernel
		kernel=$(ls /var/cache/nsperf-test-kernel/root/boot/vmlinuz-* | head -1)
		modules=/var/cache/nsperf-test-kernel/root
	fi
	local clock=${CLOCK:-virtual}
	local vm=(--kernel "$kernel" --vm-pin="$PIN" --vm-clock "$clock")
	[ -z "$modules" ] || vm+=(--modules "$modules")
	echo "guest: $kernel, --vm-pin=$PIN --vm-clock $clock"
	local t0=$SECONDS
	series "guest A/A" "$aa" --aa "${vm[@]}"
	echo "guest A/A: $((SECONDS - t0)) s of wall time for $N runs"
	if [ "$clock" = virtual ] && [ "${LADDER:-true}" = true ]; then ladder "${vm[@]}"; fi
	if [ "$clock" = virtual ] && [ "${LOAD:-true}" = true ]; then load "${vm[@]}"; fi
	[ "${AB:-true}" = true ] || return 0
	# A/B of one kernel against itself: only the free state, in two guests taking turns.
	sed '/- name: capped/,/tbf:/d' "$aa" >"$dir/ab.yaml"
	vm+=(--kernel "$kernel")
	series "guest A/B, same kernel" "$dir/ab.yaml" "${vm[@]}"
}

# ladder VMARGS...: the smallest change 5 runs per state decide, injected with a tbf at
# fractions of the free rate (the A/A runs' free median); both states behind a tbf.
ladder() {
	local free f rate rc t0=$SECONDS
	free=$(awk '$1=="free" {print $3}' "$dir/cv" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	for f in 0.99 0.98 0.95 0.90; do
		rate=$(awk -v m="$free" -v f="$f" 'BEGIN {printf "%dkbit", m*f/1e3}')
		sed -e "s/RATE/$rate/" -e 's/^  - name: free$/  - name: free\n    qdiscs:\n      client\/eth0: {tbf: {rate: 10gbit, burst: 8mb}}/' scripts/calibrate.yaml >"$dir/ladder.yaml"
		rc=0
		"$bin" run "$dir/ladder.yaml" "$@" --runs 5 --no-history --out "$dir/l.json" --format csv >"$dir/l.csv" 2>"$dir/l.log" || rc=$?
		if [ "$rc" -gt 1 ]; then
			echo "calibrate: ladder at $f failed (exit $rc):" >&2; tail -5 "$dir/l.log" >&2; exit "$rc"
		fi
		awk -F, -v f="$f" -v rate="$rate" '$2=="tcp4" && $3=="throughput" && $5=="capped" {
			printf "ladder: tbf at %s of the free rate (%s): change %+.2f%% [%+.2f%%, %+.2f%%] %s (CV %.2f%%)\n", f, rate, 100*$(NF-4), 100*$(NF-3), 100*$(NF-2), $NF, 100*$12 }' "$dir/l.csv"
	done
	echo "ladder: $((SECONDS - t0)) s of wall time"
}

# load VMARGS...: one A/A run quiet, one with a busy loop pinned to every host CPU.
load() {
	local cpu t0
	for name in quiet loaded; do
		if [ "$name" = loaded ]; then
			for cpu in $(seq 0 $(($(nproc) - 1))); do
				taskset -c "$cpu" sh -c 'while :; do :; done' &
				hogs+=($!)
			done
		fi
		t0=$SECONDS
		"$bin" run "$aa" --aa "$@" --no-history --out "$dir/$name.json" --format csv >"$dir/$name.csv" 2>"$dir/$name.log" || true
		[ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}"; hogs=()
		awk -F, -v name="$name" -v wall=$((SECONDS - t0)) '$2=="tcp4" && $3=="throughput" {printf "load: %s %s median %.4f Gbit/s CV %.2f%% (%d s of wall time)\n", name, $5, $8/1e9, 100*$12, wall}' "$dir/$name.csv"
	done
}

case $MODE in
host) host ;;
guest) guest ;;
*) echo "calibrate: MODE=$MODE: want host or guest" >&2; exit 2 ;;
esac
