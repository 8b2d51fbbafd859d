# Plugins: the example Wasm modules and the plugin benchmarks.
BENCH_TARGETS += bench-plugins

.PHONY: plugins plugin-toolchains bench-plugins fuzz-plugins
plugins: plugin-toolchains ## build the example Wasm plugins (Go, C, WAT, AssemblyScript) to plugins/examples/*.wasm (tests build their own)
	plugins/examples/build.sh

# The C, WAT and AssemblyScript examples need their own toolchains: Debian packages (clang
# with wasm-ld from lld, wasi-libc, compiler-rt's wasm32 builtins, wabt's wat2wasm) and the
# npm package assemblyscript, pinned by the example's package-lock.json.
PLUGIN_APT_PACKAGES := clang lld wasi-libc libclang-rt-dev-wasm32 wabt
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

plugin-toolchains: ## install what the C, WAT and AssemblyScript example plugins need, when missing (apt-get, npm ci)
	@if ! { command -v clang && command -v wasm-ld && command -v wat2wasm && [ -f /usr/lib/wasm32-wasi/libc.a ] && \
		ls /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a; } >/dev/null 2>&1; then \
		echo "installing $(PLUGIN_APT_PACKAGES)"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(PLUGIN_APT_PACKAGES); \
	fi
	@[ -x plugins/examples/assemblyscript-wordfilter/node_modules/.bin/asc ] || \
		npm ci --prefix plugins/examples/assemblyscript-wordfilter --no-audit --no-fund

# The Go tests build and run those examples through the gateway (TestPluginsInOtherLanguages):
# under make a missing toolchain fails that test instead of skipping a language. The PDK, a
# module of its own, is vetted and tested from ./... by TestPDKModule.
test-go: plugin-toolchains
test-go: export GATEHOUSE_REQUIRE_PLUGIN_TOOLCHAINS = 1

bench-plugins: ## plugin per-call overhead (no-op and spam filter, p50/p99, compiled and interpreted), a new module's registration to first call, and forms submits/s with and without the spam filter
	$(GO) test ./plugins/host -run '^$$' -bench FormsSubmit -benchtime 3000x
	$(GO) test ./plugins/host -run '^$$' -bench NewModuleFirstCall -benchtime 3x
	$(GO) test ./edge/cmd/gatehouse -run '^$$' -bench BenchmarkFormsSubmitSpamFilter -benchtime 20000x

fuzz-plugins: ## fuzz the host side of the plugin ABI and the loop guard's rewriter for 30s each
	$(GO) test ./plugins/host -run '^$$' -fuzz '^FuzzABI$$' -fuzztime 30s
	$(GO) test ./plugins/host -run '^$$' -fuzz '^FuzzGuardCompiles$$' -fuzztime 30s
	$(GO) test ./plugins/guard -run '^$$' -fuzz '^FuzzInstrument$$' -fuzztime 30s

# B's form at 16 concurrent wrk clients while project A runs each hostile plugin of issue 14.
BENCH_TARGETS += bench-plugins-isolation
.PHONY: bench-plugins-isolation
bench-plugins-isolation: ## projects A and B on the real gateway: B's req/s, p50, p99 and the RSS at baseline and under each hostile plugin of A (loop, burner, grower, Go hog), with ratios
	@command -v wrk >/dev/null || { echo "installing wrk"; $(SUDO) apt-get install -y -q wrk; }
	GATEHOUSE_BENCH_ISOLATION=1 $(GO) test ./edge/cmd/gatehouse -run '^TestPluginsIsolation$$' -count=1 -v -timeout 30m
