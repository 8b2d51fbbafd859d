package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A variant is built by the binary's own `variant-worker` command, started by serve as its
// child (products/files/worker.go), and served as WebP.
func TestVariantBuiltByWorkerProcess(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
	call := func(method, u, key, ctype string, body io.Reader, want int, out any) {
		t.Helper()
		req, err := http.NewRequest(method, u, body)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Accept", "image/webp")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, u, resp.StatusCode, raw, want)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s %s: %v", method, u, err)
			}
		}
		if got := resp.Header.Get("Content-Type"); strings.Contains(u, "/thumb/") && got != "image/webp" {
			t.Fatalf("the variant is %q, want image/webp", got)
		}
	}
	img, err := os.ReadFile("../../../products/files/testdata/photos/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	var slot struct{ AssetID, UploadURL string }
	call("POST", p.url+"/files/upload/presigned", "sk_live_demo_server", "application/json",
		strings.NewReader(fmt.Sprintf(`{"filename":"a.jpg","mimeType":"image/jpeg","size":%d}`, len(img))), 200, &slot)
	up, err := url.Parse(slot.UploadURL)
	if err != nil {
		t.Fatal(err)
	}
	call("PUT", p.url+up.RequestURI(), "", "image/jpeg", bytes.NewReader(img), 200, nil)
	call("POST", p.url+"/files/upload/complete", "sk_live_demo_server", "application/json",
		strings.NewReader(`{"assetId":"`+slot.AssetID+`"}`), 200, nil)
	var asset struct{ URL string }
	call("GET", p.url+"/files/assets/"+slot.AssetID, "pk_live_demo_web", "", nil, 200, &asset)
	orig, err := url.Parse(asset.URL)
	if err != nil || !strings.Contains(orig.Path, "/originals/") {
		t.Fatalf("asset URL %q", asset.URL)
	}
	call("GET", p.url+strings.Replace(orig.RequestURI(), "/originals/", "/thumb/", 1), "", "", nil, 200, nil)

	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p.cmd.Process.Pid))
	if len(lists) == 0 {
		return // no /proc here
	}
	workers := 0
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), "variant-worker") {
				workers++
			}
		}
	}
	if workers != 1 {
		t.Errorf("variant-worker children of the gateway: %d, want 1", workers)
	}
}
