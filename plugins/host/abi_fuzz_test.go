package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sliceMemory is a guest memory backed by a byte slice, for driving the
// host functions without a module.
type sliceMemory []byte

func (m sliceMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m sliceMemory) Write(off uint32, v []byte) bool {
	if uint64(off)+uint64(len(v)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], v)
	return true
}

// FuzzABI drives the host side of the ABI with arbitrary pointers,
// lengths and bytes: the host functions must answer a status code, never
// panic or touch memory outside the guest's, and the output decoders must
// reject malformed JSON with an error.
func FuzzABI(f *testing.F) {
	f.Add([]byte(`{"action":"reject","code":"SPAM","message":"no"}`), uint32(0), uint32(64), uint32(16))
	f.Add([]byte(`{"action":"rewrite","data":{"a":1}}`), uint32(60), uint32(8), uint32(4))
	f.Add([]byte(`{"records":[{"id":"1"},{"id":"2"}]}`), uint32(1<<31), uint32(1<<31), uint32(0xffffffff))
	f.Add([]byte(`{"method":"POST","url":"https://api.example.com/x","headers":{"A":"{{config.secret}}"},"body":"{{config.secret}}"}`), uint32(3), uint32(200), uint32(120))
	f.Add([]byte(`{"method":"GET","url":"http://127.0.0.1:1/","headers":{"Host":"x"}}`), uint32(0), uint32(0), uint32(0))
	f.Add([]byte(`{"success":true}`), uint32(10), uint32(1), uint32(1))
	f.Add([]byte(`{"action":`), uint32(0), uint32(9), uint32(9))
	f.Add([]byte("\xff\x00{\"records\":null}"), uint32(1), uint32(2), uint32(3))

	h := &Host{opts: DefaultOptions()}
	pl := &plugin{
		h:        h,
		reg:      Registration{Name: "fuzz", Config: map[string]string{"secret": "s", "k": "v"}},
		logs:     newLogBuffer(4 << 10),
		canFetch: true,
	}
	rule, _ := parseAllowRule("api.example.com")
	pl.allow = []allowRule{rule}
	ctx := context.Background()

	f.Fuzz(func(t *testing.T, data []byte, ptr, capacity, n uint32) {
		mem := make(sliceMemory, 256)
		copy(mem, data)
		cs := &callState{pl: pl, input: data, outputLimit: 128}

		if got := cs.readInto(mem, data, uint64(ptr), uint64(capacity)); got < statusFailed {
			t.Fatalf("input_read = %d", got)
		} else if got >= 0 && int(got) != len(data) {
			t.Fatalf("input_read = %d, want the input length %d", got, len(data))
		}
		if got := cs.outputWrite(mem, uint64(ptr), uint64(n)); got > 0 || got < statusFailed {
			t.Fatalf("output_write = %d", got)
		}
		if len(cs.output) > cs.outputLimit {
			t.Fatalf("output grew to %d past its limit %d", len(cs.output), cs.outputLimit)
		}
		if got := cs.configGet(mem, uint64(ptr), uint64(n%300), uint64(capacity), uint64(n)); got < statusFailed {
			t.Fatalf("config_get = %d", got)
		}
		cs.logWrite(mem, uint64(n), uint64(ptr), uint64(capacity))

		if req, status := pl.buildRequest(ctx, data); status == 0 {
			if !pl.allowsURL(req.URL) {
				t.Fatalf("buildRequest accepted %s, which allowHosts does not list", req.URL)
			}
		} else if status != statusInvalid && status != statusDenied {
			t.Fatalf("buildRequest status %d", status)
		}
		if out, err := decodeFilter(data); err == nil {
			switch out.Action {
			case Allow, Reject, Rewrite:
			default:
				t.Fatalf("decodeFilter accepted action %q", out.Action)
			}
		}
		_ = isObject(data)
	})
}

func TestCompilationCacheOnDisk(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		h := newHost(t, func(o *Options) { o.CacheDir = dir })
		start := time.Now()
		mustRegister(t, h, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
		t.Logf("host %d: Register took %v", i, time.Since(start))
		_ = h.Close()
	}
	var files int
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Errorf("no compiled code in the cache dir %s", dir)
	}
}
