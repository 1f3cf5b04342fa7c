# Minimal — build, run, test.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/minimal
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
DATA_DIR ?= ./.minimal
ARGS    ?=
TEST_TIMEOUT ?= 20m

.PHONY: all build run test services check bench fuzz clean

all: build

build: ## build the gateway binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN) ./cmd/minimal

run: build ## build and serve on the embedded default (no external database); env MINIMAL_REST_ADDR, MINIMAL_MCP_ADDR, DATA_DIR=…, ARGS='more serve flags'
	$(BIN) serve --data-dir $(DATA_DIR) $(ARGS)

services: ## install (when missing) and start PostgreSQL, MariaDB, ClickHouse; print their DSNs
	@scripts/services.sh

test: ## the whole suite against real databases
	envs="$$(scripts/services.sh)" && eval "$$envs" && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

check: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench: build ## gateway vs direct pgx throughput ratio, latency, streaming RSS
	envs="$$(scripts/services.sh)" && eval "$$envs" && $(GO) run ./bench

fuzz: ## a short run of every fuzz target
	$(GO) test ./query -run '^$$' -fuzz FuzzParseFilter -fuzztime 20s
	$(GO) test ./query -run '^$$' -fuzz FuzzFromParams -fuzztime 20s

clean:
	rm -rf bin
