// Command gatehouse is the single binary of the gateway: `serve` runs it; `apply`, `keys`,
// `users` and `records` drive a running server through its admin API; `plugins` starts and tries a plugin
// locally; `backup` and `restore` snapshot a node and restore it; `migrate` copies an embedded
// store into a shared database; `version` prints the build.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/products/files"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

const usage = `gatehouse: a single-binary edge gateway for email, files, forms, membership and records.

Usage:
  gatehouse serve [--config FILE] [--data DIR] [--listen ADDR] [--tenants FILE]
  gatehouse apply -f FILE [--server URL] [--token T]
  gatehouse keys create --org O [--project P] --products a,b --kind publishable|secret|test [--name N] [--server URL] [--token T]
  gatehouse keys revoke --org O [--project P] --name N [--server URL] [--token T]
  gatehouse users create --email E [--org O --role owner|member | --operator] [--server URL] [--token T | --data DIR] < password
  gatehouse records import FILE --project P --collection C [--skip N] [--batch N] [--server URL] [--token T]
  gatehouse plugins init DIR [--hook HOOK] [--module PATH]
  gatehouse plugins run MODULE --hook HOOK --input FILE [--config k=v]... [--allow-host H]... [--memory-mb N] [--timeout-ms N]
  gatehouse backup --to FILE [--config FILE] [--data DIR | --server URL [--token T]]
  gatehouse restore --from FILE [--config FILE] (--data DIR | --to postgres://...)
  gatehouse migrate --from DATA_DIR --to postgres://...
  gatehouse version

--server defaults to $GATEHOUSE_SERVER or http://localhost:8787; --token to $GATEHOUSE_ADMIN_TOKEN.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, env []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr, env)
	case "apply":
		err = applyCmd(ctx, args[1:], stdout, env)
	case "keys":
		err = keysCmd(ctx, args[1:], stdout, env)
	case "records":
		err = recordsCmd(ctx, args[1:], stdout, stderr, env)
	case "users":
		err = usersCmd(ctx, args[1:], os.Stdin, stdout, env)
	case "plugins":
		err = pluginsCmd(ctx, args[1:], stdout, stderr)
	case "backup":
		err = backupCmd(ctx, args[1:], stdout, env)
	case "restore":
		err = restoreCmd(ctx, args[1:], stdout, env)
	case "migrate":
		err = migrateCmd(ctx, args[1:], stdout, env)
	case "variant-worker": // started by serve for image variant builds (products/files/worker.go)
		err = files.ServeVariantWorker(args[1:])
	case "version", "--version":
		fmt.Fprintln(stdout, "gatehouse", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "gatehouse: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0 // --help printed the command's usage
	}
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse:", err)
		return 1
	}
	return 0
}
