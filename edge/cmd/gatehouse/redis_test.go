package main

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/config"
)

// redis.url may carry a password: serve's logs name the Redis without it, also when Redis does
// not answer at start (the node starts anyway and limits on its own).
func TestRedisURLPasswordNeverLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := config.Default()
	cfg.Redis.URL = "redis://gh:pw-s3cret@" + addr + "/1"
	var logs bytes.Buffer
	c, err := openRedis(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || c == nil {
		t.Fatalf("openRedis = %v, %v; want a client that connects later", c, err)
	}
	defer c.Close()
	if s := logs.String(); strings.Contains(s, "pw-s3cret") || !strings.Contains(s, "gh:xxxxx@"+addr) {
		t.Fatalf("logs = %q: want the URL with the password redacted", s)
	}
	cfg.Redis.URL = "redis://gh:pw-s3cret@" + addr + "/notanumber"
	if _, err := openRedis(cfg, slog.New(slog.DiscardHandler)); err == nil || strings.Contains(err.Error(), "pw-s3cret") {
		t.Fatalf("openRedis(bad db) = %v, want an error without the password", err)
	}
}
