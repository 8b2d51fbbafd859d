# Gatehouse: `make run` starts the gateway with the demo tenants; `make test` runs every test.
# Product-specific targets live in mk/*.mk and add themselves to TEST_EXTRA / BENCH_TARGETS.

SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN := bin/gatehouse
# Extra test steps (sdk-js, browser tests) and benchmarks, added by mk/*.mk.
TEST_EXTRA :=
BENCH_TARGETS := bench-go

.DEFAULT_GOAL := help

-include mk/*.mk

.PHONY: help build run install test test-go vet bench bench-go fuzz clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-22s %s\n", $$1, $$2}'

build: ## build bin/gatehouse (the Go build never needs npm: bundles are committed)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./edge/cmd/gatehouse

run: build ## build and start the gateway on ./data with the demo tenants from configs/
	./$(BIN) serve --config configs/gatehouse.yaml --tenants configs/demo.tenants.yaml

PREFIX ?= $(HOME)/.local
install: build ## copy bin/gatehouse to $(PREFIX)/bin (PREFIX defaults to ~/.local)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/gatehouse
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on PATH";; esac

vet: ## go vet every package
	$(GO) vet ./...

test: vet test-go $(TEST_EXTRA) ## install what tests need and run every test
	@echo "make test: all suites passed"

test-go: ## every Go test (unit, API over loopback, restart, fuzz seed corpora)
	$(GO) test -count=1 -timeout 20m ./...

bench: $(BENCH_TARGETS) ## run every benchmark and load script

bench-go: ## Go benchmarks of the foundation
	$(GO) test -run '^$$' -bench . -benchmem ./edge/...

fuzz: ## run each fuzz target for FUZZTIME (default 20s)
	@for t in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$t $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-20s} $$t || exit 1; \
	  done; done

clean: ## remove build outputs (not ./data)
	rm -rf bin
