package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/apiclient"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// usersCmd is `gatehouse users create --email E [--org O --role owner|member | --operator]`:
// it reads the password from the first line of stdin and creates a dashboard user through a
// running server (POST /admin/v1/users) or, with --data DIR, in a stopped node's store.
func usersCmd(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, env []string) error {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	fs := flag.NewFlagSet("users create", flag.ContinueOnError)
	email := fs.String("email", "", "the user's email (the sign-in name)")
	org := fs.String("org", "", "the org the user belongs to")
	role := fs.String("role", "", "owner or member (default member)")
	operator := fs.Bool("operator", false, "an operator: every org, no --org")
	data := fs.String("data", "", "write into the store of a stopped node in this data folder instead of calling a server")
	client := clientFlags(fs, env)
	setUsage(fs, stdout, usersSynopsis, clientEnv)
	switch sub {
	case "create":
	case "-h", "--help", "-help", "help":
		fs.Usage()
		return flag.ErrHelp
	default:
		return fmt.Errorf("usage: gatehouse users create ... (see gatehouse users --help)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *email == "" || (*operator == (*org != "")) {
		return fmt.Errorf("--email and either --org or --operator are required")
	}
	password, err := readPassword(stdin)
	if err != nil {
		return err
	}
	nu := accounts.NewUser{Email: *email, Password: password, Operator: *operator, Org: *org, Role: *role}
	var u accounts.User
	if *data != "" {
		u, err = createUserOffline(ctx, *data, env, nu)
	} else {
		u, err = createUserOnline(ctx, client, nu)
	}
	if err != nil {
		return err
	}
	what := "operator"
	if !u.Operator {
		what = u.Role + " of " + u.Org
	}
	fmt.Fprintf(stdout, "created dashboard user %s (%s)\n", u.Email, what)
	return nil
}

// usersSynopsis heads users --help.
var usersSynopsis = strings.Trim(`
  gatehouse users create --email E [--org O --role owner|member | --operator] [--server URL] [--token T | --data DIR] < password

Creates a dashboard user; the password is the first line of standard input. Through a running
server's admin API, or with --data into the store of a stopped node.`, "\n")

// readPassword reads the first line of r (a trailing CR LF or LF is not part of it).
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, accounts.MaxPassword+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", fmt.Errorf("the password is read from standard input: none was given")
	}
	return line, nil
}

// createUserOffline opens the store a node on dataDir would open (the config file and the
// GATEHOUSE_* variables as for serve: badger in dataDir/db, whose directory lock refuses a
// running node, or the postgres database) and creates the user there.
func createUserOffline(ctx context.Context, dataDir string, env []string, nu accounts.NewUser) (accounts.User, error) {
	cfg, err := layerConfig("", env)
	if err != nil {
		return accounts.User{}, err
	}
	cfg.Data, cfg.Storage.SyncWrites = dataDir, true
	if err := cfg.Validate(); err != nil {
		return accounts.User{}, err
	}
	db, err := openStore(cfg, nil)
	if err != nil {
		return accounts.User{}, fmt.Errorf("opening %s (is the node stopped?): %w", dataDir, err)
	}
	defer db.Close()
	if nu.Org != "" {
		ten, err := tenancy.NewService(tenancy.Options{DB: db})
		if err != nil {
			return accounts.User{}, err
		}
		if _, err := ten.Org(ctx, nu.Org); err != nil {
			return accounts.User{}, fmt.Errorf("org %q: %w", nu.Org, err)
		}
	}
	users, err := accounts.NewService(accounts.Options{DB: db})
	if err != nil {
		return accounts.User{}, err
	}
	return users.CreateUser(ctx, nu)
}

// createUserOnline creates the user through a running server's admin API (POST /users).
func createUserOnline(ctx context.Context, client func() (*adminClient, error), nu accounts.NewUser) (accounts.User, error) {
	ac, err := client()
	if err != nil {
		return accounts.User{}, err
	}
	res, err := ac.api.CreateUserWithResponse(ctx, apiclient.CreateUserJSONRequestBody{
		Email: nu.Email, Password: nu.Password, Operator: optional(nu.Operator),
		Org: optional(nu.Org), Role: optional(apiclient.CreateUserJSONBodyRole(nu.Role)),
	})
	if err != nil {
		return accounts.User{}, err
	}
	u, err := answered(res.HTTPResponse, res.Body, res.JSON201)
	if err != nil {
		return accounts.User{}, err
	}
	return accounts.User{Email: u.Email, Operator: u.Operator, Org: deref(u.Org), Role: deref(u.Role)}, nil
}
