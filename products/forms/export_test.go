package forms

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// FuzzCSVRow: whatever a submitter sends (any bytes in any field, the user agent included),
// the export parses back with encoding/csv to the same cells, one row per submission, and no
// cell starts with a formula character.
func FuzzCSVRow(f *testing.F) {
	for _, seed := range [][2]string{
		{"plain", "Mozilla/5.0"}, {"a,b", "\"quoted\""}, {"two\nlines", "\r\n"}, {"=1+1", "@SUM(A1)"},
		{"-2", "+3"}, {"\tTAB", "\rCR"}, {"\xff\xfe", "\x00"}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, value, agent string) {
		head := []string{"id", "createdAt", "ip", "userAgent", "message", "tags"}
		sub := Submission{ID: "id-1", CreatedAt: "2026-01-01T00:00:00.000Z", IP: "203.0.113.7", UserAgent: agent,
			Data: map[string]any{"message": value, "tags": []any{value, "b"}}}
		var buf bytes.Buffer
		cw := csv.NewWriter(&buf)
		cw.UseCRLF = true
		if err := cw.Write(head); err != nil {
			t.Fatal(err)
		}
		row := csvRow(head, sub)
		if err := cw.Write(row); err != nil {
			t.Fatal(err)
		}
		cw.Flush()
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("the export of %q / %q does not parse: %v", value, agent, err)
		}
		if len(rows) != 2 || len(rows[1]) != len(head) {
			t.Fatalf("the export of %q / %q has rows %q", value, agent, rows)
		}
		for i, cell := range rows[1] {
			// RFC 4180 line ends: with UseCRLF encoding/csv writes a value's LF as CR LF and
			// drops a lone CR; the reader gives CR LF back as LF. Line breaks survive, bare CRs not.
			if want := strings.ReplaceAll(strings.ReplaceAll(row[i], "\r\n", "\n"), "\r", ""); cell != want {
				t.Errorf("cell %d = %q, want %q", i, cell, want)
			}
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && i >= 3 {
				t.Errorf("cell %d = %q starts with a formula character", i, cell)
			}
		}
	})
}
