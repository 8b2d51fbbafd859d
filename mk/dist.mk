# Release binaries (docs/deploy.md): static builds (CGO off, so they run on any Linux libc or
# none) for the edge machines people run, with SHA-256 sums and the version stamped as `make
# build` stamps it. test-dist runs the linux/arm64 build under qemu-user (Debian's
# qemu-user-static, called directly: it needs no binfmt registration) through a few of the
# README's "Try it" commands, and checks configs/gatehouse.service with systemd-analyze verify.
TEST_EXTRA += test-dist
SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DIST_PLATFORMS := linux/amd64 linux/arm64 darwin/arm64
DIST_DIR := dist

.PHONY: dist test-dist test-deps-dist
dist: ## static binaries for linux/amd64, linux/arm64, darwin/arm64 in dist/ with dist/SHA256SUMS
	@mkdir -p $(DIST_DIR)
	@for p in $(DIST_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; out=$(DIST_DIR)/gatehouse-$$os-$$arch; \
	  echo "building $$out ($(VERSION))"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out ./edge/cmd/gatehouse || exit 1; \
	done
	cd $(DIST_DIR) && sha256sum $(foreach p,$(DIST_PLATFORMS),gatehouse-$(subst /,-,$(p))) > SHA256SUMS
	@cat $(DIST_DIR)/SHA256SUMS

test-deps-dist: ## install qemu-user-static and systemd-analyze (Debian packages), when missing
	@command -v qemu-aarch64-static >/dev/null || { echo "installing qemu-user-static"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q qemu-user-static; }
	@command -v systemd-analyze >/dev/null || { echo "installing systemd"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q systemd; }

test-dist: dist test-deps-dist ## the linux/arm64 binary under qemu-user (version, serve, /healthz, a records read) and the systemd unit verified
	GATEHOUSE_DIST_DIR=$(CURDIR)/$(DIST_DIR) GATEHOUSE_DIST_VERSION=$(VERSION) $(GO) test -count=1 -run '^TestDist' ./edge/cmd/gatehouse
