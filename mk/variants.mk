# variants: image variants encode WebP and AVIF with gen2brain/webp and gen2brain/avif, which
# run libwebp and libavif as WebAssembly on wazero. Without the nodynamic build tag those
# packages would first look for a system libwebp/libavif (dlopen at start-up); with it every
# build, test and binary uses the embedded WebAssembly only, so the binary needs no system
# library. Exported through GOFLAGS so it reaches every go command make runs, and the go
# builds that tests start themselves. The go env's own GOFLAGS are kept.
export GOFLAGS := $(strip $(shell go env GOFLAGS) -tags=nodynamic)

BENCH_TARGETS += bench-variants
.PHONY: bench-variants

bench-variants: ## variants: Go benchmarks of first builds (JPEG, PNG, WebP, AVIF) and cached serving over loopback; no PocketBase/imgproxy comparison yet
	$(GO) test -run '^$$' -bench 'Variant' -benchtime 20x -benchmem ./products/files/
