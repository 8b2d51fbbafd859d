package main

import "runtime"

// minProcs is the fewest Go processors (GOMAXPROCS) serve runs with unless max_procs or the
// GOMAXPROCS variable says otherwise. Go runs a goroutine for up to 10 ms before it lets the
// next one on its processor run, and badger's compactions and memtable flushes keep two or
// more goroutines busy for a second or two at a time. With as many processors as the 2 cores
// of a small node, they then held every processor, and each hand-off of a durable write (the
// request read, the commit, the sync, the answer) waited for one of their slices: record
// creates under 16 connections took 30-160 ms in those seconds (p99 of a 10 s run 20-80 ms,
// at p50 2 ms). With spare processors a woken goroutine runs at once and the kernel shares the
// cores among the busy threads in finer slices: p99 12-14 ms in the same runs, at the same
// CPU per write (bench-records-writes).
const minProcs = 4

// procsFor returns the GOMAXPROCS serve runs with, from max_procs (configured, 0 when unset),
// the current value (cores: Go's default, the cores the process may use) and whether the
// GOMAXPROCS variable set it.
func procsFor(configured, cores int, envSet bool) int {
	switch {
	case configured > 0:
		return configured
	case envSet:
		return cores
	}
	return max(cores, minProcs)
}

// setProcs applies procsFor to the running process and returns the cores it was given before
// (Go's default), which the plugin host keeps as its count of guest calls run at once.
func setProcs(configured int, envSet bool) (cores int) {
	cores = runtime.GOMAXPROCS(0)
	if n := procsFor(configured, cores, envSet); n != cores {
		runtime.GOMAXPROCS(n)
	}
	return cores
}
