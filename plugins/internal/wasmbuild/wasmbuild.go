// Package wasmbuild compiles Go plugin sources to Wasm modules for tests and
// benchmarks, with GOOS=wasip1 GOARCH=wasm and -buildmode=c-shared, exactly
// as plugin authors are told to in docs/plugins.md.
package wasmbuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Build compiles the main package in dir (a directory of the module, any
// path form go build accepts) to out.
func Build(ctx context.Context, dir, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("wasmbuild: go build %s: %w\n%s", dir, err, stderr.Bytes())
	}
	return nil
}

// All builds each directory of dirs to outDir/<name>.wasm, where name is
// the map key, two at a time, and returns the module bytes by name.
func All(ctx context.Context, outDir string, dirs map[string]string) (map[string][]byte, error) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
		sem  = make(chan struct{}, 2)
		mods = make(map[string][]byte, len(dirs))
	)
	for name, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := filepath.Join(outDir, name+".wasm")
			err := Build(ctx, dir, out)
			var b []byte
			if err == nil {
				b, err = os.ReadFile(out)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			mods[name] = b
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("wasmbuild: %d of %d builds failed: %v", len(errs), len(dirs), errs)
	}
	return mods, nil
}
