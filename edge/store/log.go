package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// slogAdapter routes badger's printf-style logger into slog. Badger's info chatter goes to
// debug so an info-level server stays quiet.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) log(level slog.Level, format string, args ...any) {
	// Badger logs at debug level on every write: asking first spares the formatting of lines
	// nobody reads.
	if a.l == nil || !a.l.Enabled(context.Background(), level) {
		return
	}
	a.l.Log(context.Background(), level, strings.TrimSpace(fmt.Sprintf(format, args...)), "component", "badger")
}

func (a slogAdapter) Errorf(f string, v ...any)   { a.log(slog.LevelError, f, v...) }
func (a slogAdapter) Warningf(f string, v ...any) { a.log(slog.LevelWarn, f, v...) }
func (a slogAdapter) Infof(f string, v ...any)    { a.log(slog.LevelDebug, f, v...) }
func (a slogAdapter) Debugf(f string, v ...any)   { a.log(slog.LevelDebug-4, f, v...) }
