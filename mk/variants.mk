# variants: image variants encode WebP and AVIF with gen2brain/webp and gen2brain/avif, which
# run libwebp and libavif as WebAssembly on wazero. Without the nodynamic build tag those
# packages would first look for a system libwebp/libavif (dlopen at start-up); with it every
# build, test and binary uses the embedded WebAssembly only, so the binary needs no system
# library. Exported through GOFLAGS so it reaches every go command make runs, and the go
# builds that tests start themselves. The go env's own GOFLAGS are kept.
export GOFLAGS := $(strip $(shell go env GOFLAGS) -tags=nodynamic)

BENCH_TARGETS += bench-variants bench-variants-flood
.PHONY: bench-variants bench-variants-go bench-variants-flood

# bench-variants: the side-by-side comparison of issue 30 (products/files/bench/compare.sh,
# varbench): Gatehouse, PocketBase v0.40.4's thumbs and a libvips server (when libvips-dev is
# installed) on the same photographs, each a real process measured from another one.
VARIANTS_ROUNDS ?= 3
bench-variants: ## variants: Gatehouse beside PocketBase v0.40.4 thumbs and libvips, same photographs and sizes: first builds/s, cached req/s, bytes per size, VmHWM (VARIANTS_ROUNDS rounds)
	VARIANTS_ROUNDS=$(VARIANTS_ROUNDS) products/files/bench/compare.sh

bench-variants-flood: ## variants: project B's p99 alone and while project A floods distinct ad-hoc variants, and the server's VmHWM (VARIANTS_ROUNDS rounds)
	$(GO) build -o bin/gatehouse ./edge/cmd/gatehouse
	$(GO) run ./products/files/bench/varbench -mode flood -rounds $(VARIANTS_ROUNDS)

bench-variants-go: ## variants: Go benchmarks of first builds (JPEG, PNG, WebP, AVIF) and cached serving over loopback, in the test process
	$(GO) test -run '^$$' -bench 'Variant' -benchtime 20x -benchmem ./products/files/
