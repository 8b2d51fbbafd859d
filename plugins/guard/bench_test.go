package guard

import (
	"os"
	"testing"
)

// BenchmarkInstrument rewrites a Go-built example module (about 2 MB), as
// registration does before compiling.
func BenchmarkInstrument(b *testing.B) {
	in, err := os.ReadFile("../examples/spamguard.wasm")
	if err != nil {
		b.Skip("examples not built (make plugins)")
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Instrument(in); err != nil {
			b.Fatal(err)
		}
	}
}
