package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/config"
)

// clientEnv are the environment variables of the commands that drive a running server.
var clientEnv = [][2]string{
	{"GATEHOUSE_SERVER", "server base URL, default of --server (http://localhost:8787)"},
	{"GATEHOUSE_ADMIN_TOKEN", "admin token, default of --token"},
}

// clientEnvNames are clientEnv's names: variables serve does not read but does not warn of.
func clientEnvNames() []string {
	names := make([]string, len(clientEnv))
	for i, e := range clientEnv {
		names[i] = e[0]
	}
	return names
}

// setUsage makes fs's -h/--help print the command's synopsis, its flags and the environment
// variables it reads to w (standard output: asking for help is not an error, and exits 0).
func setUsage(fs *flag.FlagSet, w io.Writer, synopsis string, env [][2]string) {
	fs.Usage = func() { writeUsage(w, fs, synopsis, env) }
}

func writeUsage(w io.Writer, fs *flag.FlagSet, synopsis string, env [][2]string) {
	fmt.Fprintf(w, "Usage:\n%s\n\nFlags:\n", synopsis)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	if len(env) > 0 {
		fmt.Fprint(w, "\nEnvironment:\n")
		for _, e := range env {
			fmt.Fprintf(w, "  %-36s %s\n", e[0], e[1])
		}
	}
}

// serveEnv lists every configuration key's variable (config.Keys), as serve --help shows.
func serveEnv() [][2]string {
	var env [][2]string
	for _, k := range config.Keys() {
		env = append(env, [2]string{config.EnvName(k), k})
	}
	return env
}

// serveSynopsis heads serve --help.
var serveSynopsis = strings.Trim(`
  gatehouse serve [--config FILE] [--data DIR] [--listen ADDR] [--tenants FILE]

Runs the gateway. The configuration is read in this order, each layer over the last: the
defaults, the config file (configs/gatehouse.yaml when present), GATEHOUSE_* environment
variables, then the flags. An empty public_url is derived from the listen address.`, "\n")

// keysSynopsis heads keys --help.
var keysSynopsis = strings.Trim(`
  gatehouse keys create --org O [--project P] --products a,b --kind publishable|secret|test [--name N] [--server URL] [--token T]
  gatehouse keys revoke --org O [--project P] --name N [--server URL] [--token T]

Creates a key (its value is printed once) or revokes one, through a running server's admin API.`, "\n")
