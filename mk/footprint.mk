# Footprint: the real server's peak RSS per phase and its data folder over a whole run (import,
# the five read mixes, durable creates), with the shipped defaults (docs/performance.md,
# Footprint). FOOTPRINT_N sets the posts (1,000,000); see products/records/bench/footprint.sh.
FOOTPRINT_N ?= 1000000

.PHONY: bench-footprint
bench-footprint: ## footprint: peak RSS per phase (import FOOTPRINT_N posts + 10k authors, 5 read mixes, durable creates), data folder size, top heap holders at the peak
	products/records/bench/footprint.sh $(FOOTPRINT_N)
