# files: the File-asset load test (upload MB/s with peak server RSS, asset-host req/s), the
# Go benchmarks, and short fuzz runs of the SVG checker and the signed-URL verifier. The fuzz
# run is not part of `make test`: a random search has no place in a gate that must be
# repeatable; `go test` replays every seed and every failure kept under testdata/fuzz.
BENCH_TARGETS += bench-files

.PHONY: bench-files test-files-fuzz

bench-files: build ## files: ~5 MB PNG PUTs, 16 concurrent (MB/s, server peak RSS) and asset-host req/s for a 50 KB PNG, on bin/gatehouse
	$(GO) run ./products/files/loadtest -bin $(BIN) -uploads 96 -c 16 -cdn-c 32 -cdn-duration 10s
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./products/files/

test-files-fuzz: ## files: fuzz the SVG checker, the upload-URL verifier, filename cleaning and the variants (decode and resize, EXIF orientation, signed segments) for 10s each
	for f in FuzzCheckSVG FuzzSignerVerify FuzzSafeFilename FuzzVariant FuzzOrientation FuzzVariantSegment; do \
	  $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FILES_FUZZTIME:-10s} ./products/files/ || exit 1; done
