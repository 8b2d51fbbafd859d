// Command pbload prepares the PocketBase side of the records comparison (compare.sh, make
// bench-records-pocketbase): on a running PocketBase v0.40.4 (make pocketbase) it creates the
// collections recordsbench's tenants document declares for Gatehouse (authors, posts), with the
// indexes a PocketBase user would add for the measured queries and two view collections for the
// group counts PocketBase has no route for, then imports recordsbench's NDJSON files through
// PocketBase's batch API, timed, and prints one line per file:
//
//	import: FILE LINES lines in SECONDS s (RATE lines/s)
//
// and, last, "token: T" (a superuser token for the wrk scripts). Ids are kept (the id field
// accepts recordsbench's "p-0000001" form), so the same request names the same record on both
// servers. The posts' related ids are stored as JSON: PocketBase checks that every related
// record exists when a record is written, and posts relate to posts imported after them.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8090", "PocketBase's address")
	email := flag.String("email", "bench@bench.test", "the superuser's email (pocketbase superuser upsert)")
	password := flag.String("password", "bench-password-1", "the superuser's password")
	nd := flag.String("nd", "", "the folder of recordsbench -ndjson (authors.ndjson, posts.ndjson)")
	batch := flag.Int("batch", 1000, "records per batch request")
	workers := flag.Int("workers", 2, "batch requests in flight")
	flag.Parse()
	c := &client{base: *url, http: &http.Client{Timeout: 5 * time.Minute}}
	if err := run(c, *email, *password, *nd, *batch, *workers); err != nil {
		log.Fatal(err)
	}
}

// client calls PocketBase's REST API with a superuser token.
type client struct {
	base, token string
	http        *http.Client
}

// call sends body (JSON) and decodes a 2xx answer into out (when not nil).
func (c *client) call(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func run(c *client, email, password, nd string, batch, workers int) error {
	var auth struct {
		Token string `json:"token"`
	}
	if err := c.call("POST", "/api/collections/_superusers/auth-with-password",
		map[string]string{"identity": email, "password": password}, &auth); err != nil {
		return err
	}
	c.token = auth.Token
	if err := c.call("PATCH", "/api/settings", map[string]any{"batch": map[string]any{
		"enabled": true, "maxRequests": batch, "timeout": 120, "maxBodySize": 256 << 20}}, nil); err != nil {
		return err
	}
	if err := createCollections(c); err != nil {
		return err
	}
	for _, f := range []struct{ file, collection string }{{"authors.ndjson", "authors"}, {"posts.ndjson", "posts"}} {
		path := filepath.Join(nd, f.file)
		t0 := time.Now()
		n, err := importFile(c, path, f.collection, batch, workers)
		if err != nil {
			return err
		}
		s := time.Since(t0).Seconds()
		fmt.Printf("import: %s %d lines in %.1f s (%.0f lines/s)\n", f.file, n, s, float64(n)/s)
	}
	fmt.Printf("token: %s\n", c.token)
	return nil
}

// idField lets the id take recordsbench's ids ("p-0000001", "au-12") instead of PocketBase's
// 15 characters.
var idField = map[string]any{"name": "id", "type": "text", "primaryKey": true, "system": true, "required": true,
	"min": 1, "max": 32, "pattern": "^[a-z0-9-]+$", "autogeneratePattern": "[a-z0-9]{15}"}

func createCollections(c *client) error {
	var authors struct {
		ID string `json:"id"`
	}
	if err := c.call("POST", "/api/collections", map[string]any{"name": "authors", "type": "base", "listRule": "", "viewRule": "",
		"fields": []any{idField, map[string]any{"name": "title", "type": "text"},
			map[string]any{"name": "email", "type": "text", "hidden": true}}}, &authors); err != nil {
		return err
	}
	cats := []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}
	tags := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	if err := c.call("POST", "/api/collections", map[string]any{"name": "posts", "type": "base", "listRule": "", "viewRule": "",
		"fields": []any{idField,
			map[string]any{"name": "title", "type": "text"},
			map[string]any{"name": "category", "type": "select", "values": cats, "maxSelect": 1},
			map[string]any{"name": "tags", "type": "select", "values": tags, "maxSelect": len(tags)},
			map[string]any{"name": "views", "type": "number"},
			map[string]any{"name": "day", "type": "date"},
			map[string]any{"name": "author", "type": "relation", "collectionId": authors.ID, "maxSelect": 1},
			map[string]any{"name": "related", "type": "json"},
			map[string]any{"name": "internalNote", "type": "text", "hidden": true}},
		// The indexes the measured list queries use (filter by category, sort by views).
		"indexes": []string{"CREATE INDEX idx_posts_category_views ON posts (category, views)",
			"CREATE INDEX idx_posts_views ON posts (views)"}}, nil); err != nil {
		return err
	}
	for _, v := range []struct{ name, query string }{
		{"posts_by_category", "SELECT category AS id, count(*) AS n FROM posts GROUP BY category"},
		{"posts_by_tag", "SELECT j.value AS id, count(*) AS n FROM posts, json_each(posts.tags) j GROUP BY j.value"},
	} {
		if err := c.call("POST", "/api/collections", map[string]any{"name": v.name, "type": "view", "listRule": "", "viewRule": "",
			"viewQuery": v.query}, nil); err != nil {
			return err
		}
	}
	return nil
}

// line is one NDJSON line of recordsbench.
type line struct {
	ID   string         `json:"id"`
	Data map[string]any `json:"data"`
}

// importFile sends the file's lines in batches of size, workers at a time, and returns the
// lines stored.
func importFile(c *client, path, collection string, size, workers int) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	batches := make(chan []map[string]any, workers)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reqs := range batches {
				if err := c.call("POST", "/api/batch", map[string]any{"requests": reqs}, nil); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	var reqs []map[string]any
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			close(batches)
			wg.Wait()
			return n, fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		body := l.Data
		body["id"] = l.ID
		reqs = append(reqs, map[string]any{"method": "POST", "url": "/api/collections/" + collection + "/records", "body": body})
		n++
		if len(reqs) == size {
			batches <- reqs
			reqs = nil
		}
	}
	if len(reqs) > 0 {
		batches <- reqs
	}
	close(batches)
	wg.Wait()
	if err := sc.Err(); err != nil {
		return n, err
	}
	return n, first
}
