# nsperf. `make run` and `make test` install what is missing first (scripts/deps.sh, as root).
GO        ?= go
# Go as installed by the official tarball, for shells whose PATH lacks it.
export PATH := $(PATH):/usr/local/go/bin
BIN       := bin/nsperf
SCENARIO  ?= veth-bigtcp
FUZZTIME  ?= 10s
# make test runs every fuzz target on its seeds and testdata/fuzz (as every go test does); it
# fuzzes for new inputs only when TESTFUZZ is set (make test TESTFUZZ=3000x), after the host
# lane's tests. Fuzzing builds every package it imports, the standard library's included,
# once more with coverage instrumentation: on a fresh machine that step took about 9
# CPU-minutes of the suite's 33 (5 of them compiling), and the suite must end in 15 minutes
# on two CPUs. make fuzz fuzzes every target (FUZZTIME each, 10s unless set; FUZZTIME=5m for
# longer). A count of executions (3000x) rather than a time: a time budget can end inside a
# worker's minimisation, and the coordinator then fails with "context deadline exceeded".
TESTFUZZ  ?=
# A new interesting input is minimised for at most this many executions: a slow target's
# minimisation otherwise runs its default minute per input (claims.FuzzRead, which also
# drafts a scenario from each input and parses it back, found two and sat for two minutes).
FUZZMINIMIZE ?= 200x
RUNFLAGS  ?=

.PHONY: all build run test fuzz bench lint deps clean models models-check calibrate calibrate-patch docs man coverage-map

all: build

deps:
	bash scripts/deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/nsperf

# The default scenario, measured; the table goes to stdout, the result to nsperf-results/.
# Exit 1 means the measurement worked and found a significant regression or a failed
# expectation: reported, and not a failure of `make run` itself.
run: deps build
	@./$(BIN) run $(SCENARIO) $(RUNFLAGS); rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "nsperf exited 1: a significant regression or a failed expectation, listed above"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

# Lint and the models check, unit tests, root integration tests (real namespaces and iperf3),
# guest and kernel-build tests (and with TESTFUZZ a short fuzz of each parser), in three lanes at once
# (scripts/test.sh): the kernel-build and the guest tests measure in virtual time, which the
# host lane's load cannot move; the host lane (lint and the models check first, beside the
# other two lanes' start) runs its packages one at a time (-p 1), since its integration tests
# measure on this clock.
test: deps
	GO=$(GO) FUZZ=$(TESTFUZZ) bash scripts/test.sh

# N short A/A runs and the token-bucket check: the false-alarm rate and whether the tbf's
# change lies in the reported CI (README, Method).
calibrate: deps build
	N=$${N:-20} bash scripts/calibrate.sh

# A patch of known cost per packet (veth_xmit), at several sizes, as A/Bs in virtual time:
# the smallest change decided (docs/method.md). Also the end of make bench.
calibrate-patch: deps build
	bash scripts/calibrate-patch.sh

# Every fuzz target of every package, found by name (go test -list): a new parser's Fuzz
# function is fuzzed without a line here.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
		done; \
	done

# Time to build and tear down the default topology: netlink (nsperf) against the same steps
# done with ip commands. Reported in README.md, never asserted.
bench: deps
	$(GO) test -run '^$$' -bench 'BuildTeardown' -benchtime 50x ./topo/
	NSPERF_BENCH_1024=1 $(GO) test -run '^$$' -bench 'Sizes|ApplyState' -benchtime 1x ./topo/
	$(GO) test -run '^$$' -bench 'Counters' -benchtime 200x ./topo/
	$(GO) test -run '^$$' -bench 'ProcessSweep' -benchtime 2000x ./topo/runstate/
	$(GO) test -run '^$$' -bench 'FirstSample' -benchtime 3x ./runner/
	$(GO) test -run '^$$' -bench 'Show10000|Import' -benchtime 10x ./history/
	$(GO) test -run '^$$' -bench 'AnalyzeHistory' -benchtime 2x ./history/
	$(GO) test -run '^$$' -bench 'Analyze' -benchtime 3x ./history/changepoint/
	$(GO) test -run '^$$' -bench 'MatrixHTML' -benchtime 3x ./htmlreport/
	$(GO) test -run '^$$' -bench 'Compare1000' -benchtime 20x -benchmem ./results/
	$(GO) test -run '^$$' -bench 'BuildModules' -benchtime 3x ./cmd/nsperf/buildtest/
	$(GO) test -run '^$$' -bench 'BuildWhole' -benchtime 3x ./cmd/nsperf/buildtest/
	$(MAKE) calibrate-patch

# staticcheck is a tool of go.mod (go get -tool): the version is pinned with the other modules.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	$(GO) vet ./...
	@# go.mod and go.sum as go mod tidy leaves them: every direct import a direct requirement
	@$(GO) mod tidy -diff >/dev/null || { echo "go mod tidy would change go.mod or go.sum: run go mod tidy"; exit 1; }
	$(GO) tool staticcheck ./...

# The Open_vSwitch models come from the schema that openvswitch-common installs.
models: deps
	$(GO) generate ./topo/ovs

# Fails when the committed models differ from what the installed schema generates.
models-check: deps
	@tmp=$$(mktemp -d) && $(GO) tool modelgen -p vswitchd -o $$tmp /usr/share/openvswitch/vswitch.ovsschema && \
	if ! diff -r -q $$tmp topo/ovs/vswitchd >/dev/null; then \
		echo "topo/ovs/vswitchd differs from the models of /usr/share/openvswitch/vswitch.ovsschema: run make models and commit"; \
		diff -r $$tmp topo/ovs/vswitchd | head -20; rm -rf $$tmp; exit 1; fi; rm -rf $$tmp

# The command reference, generated from the command tree: docs/reference (committed; the docs
# test fails when it is not what the tree makes) and a man page per command in bin/man.
# The map of the kernel functions each shipped scenario's traffic runs through (as root: a
# guest per scenario on Debian's 6.12 with the function tracer, about a minute each), which
# ships with nsperf and chooses scenarios for a patch. Run it when a scenario is added or
# changed (for one: ./bin/nsperf coverage NAME --out coverage/map.json --update); TestShippedMap
# fails until it is.
coverage-map: deps build
	./bin/nsperf coverage --out coverage/map.json

docs:
	rm -rf docs/reference
	$(GO) run ./cmd/nsperf docs --markdown docs/reference

man:
	$(GO) run ./cmd/nsperf docs --man bin/man
	@echo "man pages in bin/man: man -l bin/man/nsperf-run.1"

clean:
	rm -rf bin
