//go:build wasip1

// Command fetcher fetches the URL in the message field and rejects with
// FETCH_<status> or FETCH_DENIED/FETCH_LIMIT/FETCH_FAILED, so tests can see
// what http_fetch answered. Fields "times" repeats the fetch.
package main

import (
	"errors"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

func init() {
	pdk.OnFormSubmit(func(s pdk.Submission) pdk.Verdict {
		times, _ := s.Field("times").AsInt()
		if times == 0 {
			times = 1
		}
		var resp pdk.Response
		var err error
		for i := int64(0); i < times && err == nil; i++ {
			resp, err = pdk.Fetch(pdk.Request{Method: "POST", URL: s.Field("message").Text(),
				Headers: map[string]string{"X-Secret": "{{config.secret}}"}, Body: "k={{config.secret}}"})
		}
		switch {
		case errors.Is(err, pdk.ErrDenied):
			return pdk.Reject("FETCH_DENIED", "")
		case errors.Is(err, pdk.ErrLimit):
			return pdk.Reject("FETCH_LIMIT", "")
		case err != nil:
			return pdk.Reject("FETCH_FAILED", err.Error())
		}
		return pdk.Reject("FETCH_"+strconv.Itoa(resp.Status), string(resp.Body))
	})
}

func main() {}
