//go:build !wasip1

package pdk

import (
	"errors"
	"fmt"
)

// Outside GOOS=wasip1 there is no host: these stand-ins let the package
// build, be documented and be tested on any platform, and let TestCall
// drive the hook functions the way the host does.

var (
	testInput  []byte
	testOutput []byte
	testConfig map[string]string
)

func readInput() []byte { return testInput }

func writeOutput(b []byte) int32 {
	testOutput = append(testOutput, b...)
	return 0
}

func configGet(key string) (string, bool) {
	v, ok := testConfig[key]
	return v, ok
}

func logWrite(int32, string) {}

func fetch([]byte) (Response, error) { return Response{}, ErrNoHost }

// TestCall runs the handler registered for hook ("forms.submit",
// "records.read", "email.send" or "captcha.verify") the way the host calls
// a module: input is the hook's input document (docs/plugins.md,
// "Documents"), config the plugin's config. It returns the output document
// the module writes back (empty means allow, or unchanged), or an error
// carrying the message of a failed call. Fetch reports ErrNoHost and Log
// discards its lines.
//
// It exists outside GOOS=wasip1 only, for a plugin's own `go test`, and is
// not safe for concurrent use.
func TestCall(hook, input string, config map[string]string) (string, error) {
	run, ok := map[string]func() int32{
		"forms.submit":   runFormSubmit,
		"records.read":   runRecordsRead,
		"email.send":     runEmailSend,
		"captcha.verify": runCaptchaVerify,
	}[hook]
	if !ok {
		return "", fmt.Errorf("pdk: unknown hook %q", hook)
	}
	testInput, testOutput, testConfig, configCache = []byte(input), nil, config, nil
	code := run()
	out := string(testOutput)
	if code != codeOK {
		return "", errors.New(out)
	}
	return out, nil
}
