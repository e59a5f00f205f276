#!/bin/sh
# nsperf across a fleet: every machine runs its matrix of scenarios on its own kernel and
# writes to one PostgreSQL history; any machine (or a CI job) then gates on change points
# that no one has acknowledged yet (`nsperf history ack` marks one as known).
#
#   NSPERF_DB=postgres://nsperf@db.example.org/nsperf sh examples/fleet.sh
#
# SCENARIOS (default: veth-bigtcp vxlan-bigtcp) and RUN_FLAGS (e.g. "--runs auto") choose
# what each machine measures. Exit: 0 nothing new, 1 a new change point, other: a failure.
set -eu
: "${NSPERF_DB:?set NSPERF_DB to the fleet's PostgreSQL history, e.g. postgres://nsperf@db/nsperf}"
NSPERF=${NSPERF:-nsperf}
SCENARIOS=${SCENARIOS:-veth-bigtcp vxlan-bigtcp}
label="$(hostname)/$(uname -r)"
for scenario in $SCENARIOS; do
	code=0
	# shellcheck disable=SC2086 # RUN_FLAGS is a list of flags
	"$NSPERF" run "$scenario" --db "$NSPERF_DB" --label "$label" ${RUN_FLAGS:-} || code=$?
	case $code in
	0 | 1) ;; # measured and recorded; a regression within the run is the gate's to judge
	4) echo "fleet.sh: $scenario: this kernel cannot apply it (exit 4), skipped" >&2 ;;
	*) echo "fleet.sh: $scenario failed (exit $code)" >&2; exit "$code" ;;
	esac
done
exec "$NSPERF" history analyze --db "$NSPERF_DB" --fail-on-new 1
