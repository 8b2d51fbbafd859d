# pocketbase: the peer the benchmarks measure Gatehouse against in the same run (records read
# mixes, batch import, durable creates, image thumbs): PocketBase v0.40.4 built from its Go
# module as its documentation shows (bench/pocketbase, a module of its own, so the gateway's
# go.mod never depends on it). PocketBase v0.40.4 needs Go 1.27; the go command fetches that
# toolchain through the module proxy for this build only (GOTOOLCHAIN), the gateway stays on
# the machine's Go. The binary is bin/pocketbase; `bin/pocketbase serve --dir D --http ADDR`.
PB_BIN := bin/pocketbase
PB_TOOLCHAIN ?= go1.27.3

.PHONY: pocketbase
pocketbase: $(PB_BIN) ## the PocketBase v0.40.4 reference binary (bin/pocketbase) for side-by-side benchmarks

$(PB_BIN): bench/pocketbase/go.mod bench/pocketbase/go.sum bench/pocketbase/main.go
	cd bench/pocketbase && GOFLAGS= GOTOOLCHAIN=$(PB_TOOLCHAIN) CGO_ENABLED=0 go build -trimpath -o ../../$(PB_BIN) .
