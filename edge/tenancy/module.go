package tenancy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// kModule: tenancy/module/<project>/<name> -> Wasm bytes uploaded through the admin API.
const kModule = "module"

// MaxModuleBytes caps an uploaded plugin module.
const MaxModuleBytes = 32 << 20

// ErrNotWasm reports an upload that is not a WebAssembly binary module.
var ErrNotWasm = errors.New("tenancy: not a WebAssembly module (missing \\0asm version 1 header)")

// IsModulePath reports whether a plugin's module names a file (a path ending in .wasm or
// holding a slash) rather than a module uploaded through the admin API.
func IsModulePath(module string) bool {
	return strings.HasSuffix(module, ".wasm") || strings.Contains(module, "/")
}

// PutModule stores an uploaded Wasm module for project under name; plugins of the project whose
// `module` is that name use it. Listeners are told with a Change of kind "module".
func (s *Service) PutModule(ctx context.Context, project, name string, module []byte) error {
	if !nameRe.MatchString(name) {
		return &InvalidError{Problems: []Problem{{Path: "name", Message: "must be 1-63 letters, digits, - or _"}}}
	}
	if len(module) > MaxModuleBytes {
		return ErrTooLarge
	}
	if len(module) < 8 || !bytes.Equal(module[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return ErrNotWasm
	}
	if _, err := s.Project(ctx, project); err != nil {
		return fmt.Errorf("project %q: %w", project, err)
	}
	if err := s.checkModule(ctx, project, name, module); err != nil {
		return err
	}
	err := s.db.Update(ctx, func(txn *store.Txn) error { return txn.Set(key(kModule, project, name), module) })
	if err == nil {
		s.changed(ctx, []Change{{Op: "updated", Kind: kModule, Path: project + "/" + name}})
	}
	return err
}

// Module returns an uploaded module, or ErrNotFound.
func (s *Service) Module(ctx context.Context, project, name string) ([]byte, error) {
	var out []byte
	err := s.db.View(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(key(kModule, project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		out = v
		return err
	})
	return out, err
}
