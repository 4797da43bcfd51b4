# iotbench. The two commands a newcomer needs: `make run` and `make test` (see README.md).
GO      ?= go
BIN     := bin/iotbench
PKG     := github.com/iotbench/iotbench
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS := -X $(PKG)/internal/hostinfo.Version=$(VERSION) -X $(PKG)/internal/hostinfo.BuildCommit=$(COMMIT)
# `make run` answers the default question: how much io-heavy load each runtime sustains under the
# SLO (p99 < 100 ms, errors < 0.1%), at what latency and CPU and memory cost, in one sentence, each
# target in the scenario's 1 GiB (the embedded store keeps the latest 1,000 readings:
# docs/contract.md). One search a target, no latency below the maximum: a first answer, not a
# ranking. RUN_DEFAULT with --trials 6 --latency-at 50%,75%,90% ranks them, with the latency at
# those shares of each maximum; its last lines print that command (how long each takes: README.md,
# its first lines). ARGS
# replaces it with any run, e.g. make run ARGS="--scenario io-heavy --trials 5"
RUN_DEFAULT := --scenario io-heavy --targets spring-mvc-virtual,fastify,bun-native --find-max --trials 1 --step 4s --warmup auto --resolution 20%
ARGS    ?=
# DOCKER=0 lets `make unit` skip the tests that need a Docker engine (for a machine without one);
# by default they fail when no engine answers, so that `make test` never passes without them.
DOCKER  ?= 1

.PHONY: build prepare run test docker chromium perf sshd lint unit e2e acceptance bench-generator clean experiments experiments-doc kube-build kube-up kube-down

# Static (no cgo): the same binary runs in the generator shard image on other engines (docs/scale.md).
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/iotbench

# A Docker engine that answers, and the root image the targets' Dockerfiles start FROM.
docker:
	scripts/ensure-docker.sh
	scripts/root-image.sh

# The binary and the Docker engine with its root image, side by side: on a new machine the build is
# mostly compiling, the engine's install and the root image mostly downloading.
prepare:
	@$(MAKE) --no-print-directory -j2 build docker

# Headless Chromium, for the test that opens the HTML report.
chromium:
	scripts/ensure-chromium.sh

# Linux perf, for run --profile and its end-to-end test.
perf:
	scripts/ensure-perf.sh

# sshd (not started), for the end-to-end test that reaches an engine over ssh:// in its own namespace.
sshd:
	scripts/ensure-sshd.sh

# A two-node Kubernetes v1.34.4 cluster on this machine, built from the Go module proxy (tools/kube/README.md).
kube-build:
	scripts/kube-cluster.sh build

kube-up:
	scripts/kube-cluster.sh up

kube-down:
	scripts/kube-cluster.sh down

# The default question (RUN_DEFAULT: its answer, and every step in results/<time>.csv), or the run
# ARGS asks for: tables, results/<time>.csv, its timeline and histograms (results/<time>.timeline/)
# and, either way, the report, results/<time>.html.
run: prepare
	$(BIN) run --html $(if $(ARGS),$(ARGS),$(RUN_DEFAULT))

# The published experiments (experiments.yaml), short: 2 trials of 5 s per cell, about 40 minutes,
# into docs/experiments/ (committed), then docs/experiments.md from them. The full version of one:
# bin/iotbench reproduce NAME (resumable). Remove docs/experiments/ first to measure anew.
experiments: prepare
	$(BIN) reproduce all --trials 2 --duration 5s --out docs/experiments
	$(MAKE) experiments-doc

# docs/experiments.md from the committed run files, byte for byte (no Docker, nothing run).
experiments-doc: build
	$(BIN) claims all --results docs/experiments --format markdown > docs/experiments.md

test: docker chromium perf lint unit e2e
# make test always runs the Docker side and the browser test: DOCKER=0 is for `make unit` alone.
test: override DOCKER := 1

# go.mod and go.sum as `go mod tidy` leaves them (-diff changes nothing; it may fetch the go.mod
# files of dependencies' test imports from the module proxy on a machine that never had them).
lint:
	@out=$$(gofmt -l cmd internal tools e2e); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/...

# Unit tests, the load engine under the race detector, and the Docker side against real containers.
# One package at a time (-p 1): timing assertions of the engine must not compete with other packages.
# `make unit DOCKER=0` skips the Docker side instead of failing without an engine.
unit:
	IOTBENCH_REQUIRE_DOCKER=$(filter-out 0,$(DOCKER)) IOTBENCH_REQUIRE_CHROMIUM=$(filter-out 0,$(DOCKER)) $(GO) test -race -p 1 -count=1 ./...

# End to end: the real target images built and run through the iotbench binary. Every JVM image build
# runs the JVM contract's JUnit tests (targets/jvm/contract), so they run here too.
e2e: build sshd kube-build
	IOTBENCH_BIN=$(CURDIR)/$(BIN) $(GO) test -tags e2e -count=1 -timeout 60m -v ./e2e/...

# iotbench's own accuracy against an independent server with a fixed 50 ms service time, each
# pinned to its own core: 2,000 rps for 20 s (achieved >= 99.5%, p50 within 1.5 ms of 50 ms, p99
# within 5 ms), then a server failing 30% of requests (success ratio ~0.70, exit status 1).
acceptance: build
	$(GO) build -o bin/stubserver ./tools/stubserver
	scripts/acceptance.sh

# The load generator against wrk, both against nginx on loopback, each pinned to its own core: a
# table of figures (docs/generator.md), not pass/fail. ARGS="-step 10s -soak 10m" for longer.
bench-generator:
	LDFLAGS="$(LDFLAGS)" scripts/bench-generator.sh $(ARGS)

clean:
	rm -rf bin
