package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServeRefusesPostgresWithLocalBlobs: serve on the shared database with blobs in a folder
// only this node reads exits non-zero before it opens anything, naming the two ways out; a
// malformed storage.postgres.url is refused with its password redacted.
func TestServeRefusesPostgresWithLocalBlobs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"local blobs", []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=postgres://gh:s3cret@127.0.0.1:1/gatehouse"},
			[]string{"storage.backend postgres", "files.backend s3", "files.local_shared: true"}},
		{"no url", []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_FILES_LOCAL_SHARED=true"},
			[]string{"storage.postgres.url is required"}},
		{"bad url", []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=mysql://gh:s3cret@db/x", "GATEHOUSE_FILES_BACKEND=s3"},
			[]string{"storage.postgres.url mysql://gh:xxxxx@db/x must be a postgres://"}},
		{"unknown backend", []string{"GATEHOUSE_STORAGE_BACKEND=sqlite"},
			[]string{`storage.backend must be badger or postgres, not "sqlite"`}},
	} {
		var out, errOut bytes.Buffer
		args := []string{"serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--config", writeFile(t, t.TempDir(), "c.yaml", "{}\n")}
		code := run(context.Background(), args, &out, &errOut, tc.env)
		if code == 0 {
			t.Errorf("serve (%s): exit 0, want a refusal", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("serve (%s): stderr %q lacks %q", tc.name, errOut.String(), w)
			}
		}
		if strings.Contains(errOut.String()+out.String(), "s3cret") {
			t.Errorf("serve (%s) prints the database password: %s", tc.name, errOut.String())
		}
	}
}
