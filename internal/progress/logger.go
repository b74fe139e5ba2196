package progress

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Logger returns a logger whose records print as progress lines: the
// message, then the attributes as key=value. Packages log through
// log/slog; a command shows their records as its progress this way.
func (p *Progress) Logger() *slog.Logger {
	return slog.New(progressHandler{p: p})
}

// progressHandler is the slog.Handler of Progress.Logger.
type progressHandler struct {
	p      *Progress
	prefix string // of attribute keys (groups)
	attrs  string // preformatted attributes of WithAttrs
}

func (h progressHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h progressHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	if r.Level >= slog.LevelWarn {
		b.WriteString(" [" + strings.ToLower(r.Level.String()) + "]")
	}
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.prefix, a)
		return true
	})
	h.p.Step("%s", b.String())
	return nil
}

func (h progressHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range as {
		writeAttr(&b, h.prefix, a)
	}
	h.attrs += b.String()
	return h
}

func (h progressHandler) WithGroup(name string) slog.Handler {
	if name != "" {
		h.prefix += name + "."
	}
	return h
}

func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	v := a.Value.Resolve().String()
	if strings.ContainsAny(v, " \t\n\"=") || v == "" {
		v = fmt.Sprintf("%q", v)
	}
	fmt.Fprintf(b, " %s%s=%s", prefix, a.Key, v)
}
