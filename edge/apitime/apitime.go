// Package apitime is the one timestamp form of the public interface and the admin API:
// RFC 3339 in UTC with milliseconds ("2026-11-28T07:44:03.000Z"). Every product writes its
// times through it, so answers, stored records and webhook events agree to the character.
package apitime

import "time"

// Layout is the interface's timestamp layout (time.Format), RFC 3339 with milliseconds.
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Format renders t in UTC in Layout.
func Format(t time.Time) string { return t.UTC().Format(Layout) }
