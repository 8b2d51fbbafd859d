package examples_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// plugins/pdk is a module of its own (decisions.md 8.5), so `go vet ./...` and
// `go test ./...` at the repository root do not reach it. This test does:
// it vets the PDK for the host platform and for wasip1, runs its tests, and
// checks that its go.mod asks for Go 1.24 and requires nothing, which is what
// lets an author use it from a path `replace` with no access to the gateway's
// module.
func TestPDKModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to check the PDK module: %v", err)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = "../pdk"
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("go %s (in plugins/pdk, %v): %v\n%s", strings.Join(args, " "), env, err, out)
		}
		return string(out)
	}

	var mod struct {
		Module  struct{ Path string }
		Go      string
		Require []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(run(nil, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if mod.Module.Path != "github.com/gatehouse-dev/gatehouse/plugins/pdk" || mod.Go != "1.24" || len(mod.Require) != 0 {
		t.Errorf("plugins/pdk/go.mod: module %q, go %q, %d requirements; want the PDK's path, go 1.24 and no requirements",
			mod.Module.Path, mod.Go, len(mod.Require))
	}

	run([]string{"GOWORK=off"}, "vet", "./...")
	run([]string{"GOWORK=off", "GOOS=wasip1", "GOARCH=wasm"}, "vet", "./...")
	if out := run([]string{"GOWORK=off"}, "test", "./..."); !strings.Contains(out, "ok") {
		t.Errorf("go test in plugins/pdk ran nothing:\n%s", out)
	}
}
