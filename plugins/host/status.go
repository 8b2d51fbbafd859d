package host

import (
	"sync"
	"sync/atomic"
	"time"
)

// Error kinds: why a plugin call failed, as counted in
// gatehouse_plugin_errors_total{kind} and in Status.
const (
	KindTrap        = "trap"         // the guest trapped (a Go guest's panic, unreachable, ...)
	KindTimeout     = "timeout"      // stopped at its time limit
	KindMemory      = "memory"       // its memory limit, its project's share or the host's budget refused a grow
	KindOutput      = "output"       // malformed or oversized output
	KindGuestError  = "guest_error"  // the hook returned 1 (an error of the guest's own)
	KindCircuitOpen = "circuit_open" // the breaker is open after repeated failures
	KindPoolBusy    = "pool_busy"    // no instance of the plugin became free in time
	KindBusy        = "busy"         // the project's plugins used up their CPU budget, or its queue is full
	KindStart       = "start"        // an instance could not be started
	KindRefused     = "refused"      // the module is missing or refused: nothing can run
)

var errorKinds = [...]string{KindTrap, KindTimeout, KindMemory, KindOutput, KindGuestError, KindCircuitOpen,
	KindPoolBusy, KindBusy, KindStart, KindRefused}

// Plugin statuses (PluginStatus.Status).
const (
	StatusRunning  = "running"  // registered and serving
	StatusRefused  = "refused"  // its module is missing or the host refused it: calls fail (onError applies)
	StatusDisabled = "disabled" // its circuit breaker is open: calls fail at once until the trial call
)

// PluginStatus is what the admin API shows of one plugin.
type PluginStatus struct {
	Name        string           `json:"name"`
	Hooks       []string         `json:"hooks"`
	Status      string           `json:"status"`
	LastError   string           `json:"lastError,omitempty"`
	LastErrorAt *time.Time       `json:"lastErrorAt,omitempty"`
	Calls       int64            `json:"calls"`
	Errors      map[string]int64 `json:"errors"` // by kind; kinds never seen are left out
}

// stats counts one plugin's calls and failures since it was registered.
type stats struct {
	calls  atomic.Int64
	errors [len(errorKinds)]atomic.Int64

	mu      sync.Mutex
	lastErr string
	lastAt  time.Time
}

func (s *stats) failed(kind string, err error) {
	for i, k := range errorKinds {
		if k == kind {
			s.errors[i].Add(1)
		}
	}
	s.mu.Lock()
	s.lastErr, s.lastAt = err.Error(), time.Now().UTC()
	s.mu.Unlock()
}

func (pl *plugin) status(now time.Time) PluginStatus {
	st := PluginStatus{Name: pl.reg.Name, Hooks: append([]string{}, pl.reg.Hooks...), Status: StatusRunning,
		Calls: pl.stats.calls.Load(), Errors: map[string]int64{}}
	switch {
	case pl.refused != nil:
		st.Status = StatusRefused
	case pl.breaker.isOpen(now):
		st.Status = StatusDisabled
	}
	for i, k := range errorKinds {
		if n := pl.stats.errors[i].Load(); n > 0 {
			st.Errors[k] = n
		}
	}
	pl.stats.mu.Lock()
	if pl.stats.lastErr != "" {
		at := pl.stats.lastAt
		st.LastError, st.LastErrorAt = pl.stats.lastErr, &at
	}
	pl.stats.mu.Unlock()
	if st.LastError == "" && pl.refused != nil {
		st.LastError = pl.refused.Error()
	}
	return st
}

// Status reports each of a project's plugins in call order: refused ones
// (module missing or refused) included.
func (h *Host) Status(project string) []PluginStatus {
	h.mu.Lock()
	p, ok := h.projects[project]
	h.mu.Unlock()
	if !ok {
		return []PluginStatus{}
	}
	now := time.Now()
	out := []PluginStatus{}
	for _, pl := range p.list() {
		out = append(out, pl.status(now))
	}
	return out
}

// LogLines returns up to n of the newest lines of a plugin's log buffer,
// newest first; ok is false when the project has no such plugin.
func (h *Host) LogLines(project, name string, n int) (lines []LogLine, ok bool) {
	pl := h.find(project, name)
	if pl == nil {
		return nil, false
	}
	return pl.logs.Newest(n), true
}
