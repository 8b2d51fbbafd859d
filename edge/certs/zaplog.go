package certs

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLogger is the zap logger certmagic wants, writing its warnings and errors (the ACME
// exchange's details, with certmagic's own fields) to the gateway's slog logger; its
// informational chatter is left out (onEvent logs what matters of it).
func zapLogger(log *slog.Logger) *zap.Logger {
	return zap.New(&slogCore{log: log, min: zapcore.WarnLevel})
}

// slogCore is a zapcore.Core over slog.
type slogCore struct {
	log    *slog.Logger
	min    zapcore.Level
	fields []zapcore.Field
}

func (c *slogCore) Enabled(l zapcore.Level) bool { return l >= c.min }

func (c *slogCore) With(fs []zapcore.Field) zapcore.Core {
	return &slogCore{log: c.log, min: c.min, fields: append(append([]zapcore.Field(nil), c.fields...), fs...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	attrs := make([]any, 0, 2*len(enc.Fields)+2)
	if e.LoggerName != "" {
		attrs = append(attrs, "logger", e.LoggerName)
	}
	for k, v := range enc.Fields {
		attrs = append(attrs, k, v)
	}
	level := slog.LevelWarn
	if e.Level >= zapcore.ErrorLevel {
		level = slog.LevelError
	}
	c.log.Log(context.Background(), level, "certmagic: "+e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }
