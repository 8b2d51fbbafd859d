// Command loadtest measures the File-asset product on a real gateway process (make bench-files):
// upload throughput of ~5 MB PNG PUTs from 16 concurrent clients with the server's peak RSS
// during them, and requests per second of the asset host for a ~50 KB image.
//
//	go build -o bin/gatehouse ./edge/cmd/gatehouse
//	go run ./products/files/loadtest -bin bin/gatehouse
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/procstat"
)

func main() {
	bin := flag.String("bin", "bin/gatehouse", "gatehouse binary to start")
	tenants := flag.String("tenants", "configs/demo.tenants.yaml", "tenants document (needs sk_live_demo_server)")
	uploads := flag.Int("uploads", 96, "number of ~5 MB uploads")
	conc := flag.Int("c", 16, "concurrent uploads")
	cdnConc := flag.Int("cdn-c", 32, "concurrent asset-host clients")
	cdnDur := flag.Duration("cdn-duration", 10*time.Second, "asset-host load duration")
	flag.Parse()
	if err := run(*bin, *tenants, *uploads, *conc, *cdnConc, *cdnDur); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

const key = "sk_live_demo_server"

func run(bin, tenants string, uploads, conc, cdnConc int, cdnDur time.Duration) error {
	dir, err := os.MkdirTemp("", "gatehouse-files-bench-")
	if err != nil {
		return err
	}
	if os.Getenv("KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Println("data folder kept:", dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	cmd := exec.Command(bin, "serve", "--config", "configs/gatehouse.yaml", "--data", dir, "--listen", addr, "--tenants", tenants)
	cmd.Env = append(os.Environ(), "GATEHOUSE_PUBLIC_URL="+base, "GATEHOUSE_LOG_LEVEL=warn")
	logf, _ := os.Create(filepath.Join(dir, "server.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	if err := waitReady(base); err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}, Timeout: time.Minute}

	big := noisePNG(1300, 1340) // ~5.2 MB (just under 5 MiB), incompressible
	fmt.Printf("files bench: server pid %d, %s\n", pid, base)
	fmt.Printf("upload: %d PUTs of a %d-byte PNG, %d concurrent (sync_writes on, local blobs)\n", uploads, len(big), conc)
	slots := make([]string, uploads)
	for i := range slots {
		if slots[i], _, err = presign(client, base, fmt.Sprintf("big-%d.png", i), len(big)); err != nil {
			return err
		}
	}
	rssBefore := rssKB(pid, "VmRSS")
	var peak atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			if r := rssKB(pid, "VmRSS"); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var next atomic.Int64
	var failures atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(slots) {
					return
				}
				if err := put(client, slots[i], big); err != nil {
					failures.Add(1)
					fmt.Fprintln(os.Stderr, "PUT:", err)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(stop)
	sampler.Wait()
	mb := float64(uploads*len(big)) / 1e6
	fmt.Printf("upload: %.1f MB in %.2fs = %.1f MB/s, %.1f uploads/s, %d failed\n", mb, el.Seconds(), mb/el.Seconds(), float64(uploads)/el.Seconds(), failures.Load())
	fmt.Printf("upload: server RSS before %.1f MB, peak during %.1f MB (sampled every 20 ms), VmHWM after %.1f MB; %d x %d bytes in flight would be %.1f MB if buffered\n",
		float64(rssBefore)/1024, float64(peak.Load())/1024, float64(rssKB(pid, "VmHWM"))/1024, conc, len(big), float64(conc*len(big))/1e6)

	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		fmt.Println("(cannot reset VmHWM:", err, ")")
	}
	small := noisePNG(130, 128) // ~50 KB
	url, err := uploadAndComplete(client, base, small)
	if err != nil {
		return err
	}
	fmt.Printf("asset host: server RSS before the load %.1f MB\n", float64(rssKB(pid, "VmRSS"))/1024)
	var reqs, bad atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), cdnDur)
	defer cancel()
	start = time.Now()
	for w := 0; w < cdnConc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				resp, err := client.Get(url)
				if err != nil {
					bad.Add(1)
					continue
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n != int64(len(small)) {
					bad.Add(1)
				}
				reqs.Add(1)
			}
		}()
	}
	wg.Wait()
	el = time.Since(start)
	fmt.Printf("asset host: %d-byte PNG, %d concurrent keep-alive clients for %s: %.0f req/s (%.1f MB/s), %d bad\n",
		len(small), cdnConc, cdnDur, float64(reqs.Load())/el.Seconds(), float64(reqs.Load())*float64(len(small))/1e6/el.Seconds(), bad.Load())
	fmt.Printf("asset host: server peak RSS (VmHWM) during it %.1f MB (RssAnon now %.1f MB, RssFile %.1f MB)\n",
		float64(rssKB(pid, "VmHWM"))/1024, float64(rssKB(pid, "RssAnon"))/1024, float64(rssKB(pid, "RssFile"))/1024)
	return nil
}

func waitReady(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("server at %s not ready", base)
}

func presign(c *http.Client, base, name string, size int) (uploadURL, id string, err error) {
	body, _ := json.Marshal(map[string]any{"filename": name, "mimeType": "image/png", "size": size})
	req, _ := http.NewRequest("POST", base+"/files/upload/presigned", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var slot struct{ UploadURL, AssetID string }
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", "", fmt.Errorf("presign: %d %s", resp.StatusCode, b)
	}
	err = json.NewDecoder(resp.Body).Decode(&slot)
	return slot.UploadURL, slot.AssetID, err
}

func put(c *http.Client, url string, body []byte) error {
	req, _ := http.NewRequest("PUT", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "image/png")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return nil
}

func uploadAndComplete(c *http.Client, base string, img []byte) (string, error) {
	u, id, err := presign(c, base, "small.png", len(img))
	if err != nil {
		return "", err
	}
	if err := put(c, u, img); err != nil {
		return "", err
	}
	req, _ := http.NewRequest("POST", base+"/files/upload/complete", strings.NewReader(`{"assetId":"`+id+`"}`))
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	req, _ = http.NewRequest("GET", base+"/files/assets/"+id, nil)
	req.Header.Set("X-API-Key", key)
	resp, err = c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var a struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || a.URL == "" {
		return "", fmt.Errorf("asset has no url (%v)", err)
	}
	return a.URL, nil
}

// noisePNG is an incompressible w x h RGBA PNG.
func noisePNG(w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), 255
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	_ = enc.Encode(&b, img)
	return b.Bytes()
}

// rssKB reads a VmRSS/VmHWM line of /proc/<pid>/status, in kB (0 when unreadable).
func rssKB(pid int, field string) int64 {
	kb, _ := procstat.KB(pid, field)
	return kb
}
