package apitime

import (
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	at := time.Date(2026, 11, 28, 8, 44, 3, 7_000_000, time.FixedZone("CET", 3600))
	if got, want := Format(at), "2026-11-28T07:44:03.007Z"; got != want {
		t.Errorf("Format(%v) = %q, want %q", at, got, want)
	}
}
