//go:build wasip1

// Command printer writes to stdout, stderr and the host log, reads the
// clock and the random source, and rewrites the submission with what it saw.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		fmt.Println("hello stdout", s.Form)
		fmt.Fprintln(os.Stderr, "hello stderr")
		pdk.Log(pdk.LevelWarn, "hello log")
		b := make([]byte, 8)
		rand.Read(b)
		_, hasHome := os.LookupEnv("HOME")
		_, fsErr := os.ReadFile("/etc/passwd")
		return pdk.RewriteData(map[string]any{
			"now":     time.Now().UTC().Format(time.RFC3339),
			"rand":    hex.EncodeToString(b),
			"env":     hasHome || len(os.Environ()) > 0,
			"fs":      fsErr == nil,
			"message": s.Field("message").Text() + "!",
		})
	})
}

func main() {}
