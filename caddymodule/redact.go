package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

func init() {
	caddy.RegisterModule(RedactEncoder{})
}

// RedactEncoder is the log encoder `llm_redact`: it wraps another encoder
// (default `json`) and keeps credentials out of every log line it writes.
//
//   - The values of credential headers are written as "REDACTED" wherever
//     an entry holds a header map: the request headers of the access log
//     and of error logs, the upstream request of the reverse proxy, the
//     response headers. The headers are Authorization, Proxy-Authorization,
//     X-Api-Key (which Anthropic clients send the gateway key in), Api-Key,
//     X-Goog-Api-Key, Cookie, Set-Cookie, the OpenAI organisation and
//     project headers, those of the llm app's `redact_headers` and those
//     listed here. Caddy's own encoders redact only Authorization and
//     cookies.
//   - Provider credentials and the values of providers' configured
//     headers, wherever they appear in a line, and anything shaped like a
//     gateway key (<prefix>_live_<random>), are replaced by "[redacted]".
//
// Use it for every log that can receive HTTP entries, the access log
// above all:
//
//	log {
//		format llm_redact
//	}
type RedactEncoder struct {
	// WrappedRaw is the encoder that writes the entries. Default `json`.
	WrappedRaw json.RawMessage `json:"wrap,omitempty" caddy:"namespace=caddy.logging.encoders inline_key=format"`
	// Headers are more header names whose values are redacted.
	Headers []string `json:"headers,omitempty"`

	// Encoder is the wrapped encoder: every method not defined below
	// (the ones that write no text a secret could be in) goes to it as is.
	zapcore.Encoder `json:"-"`
	extra           map[string]bool
}

// CaddyModule returns the Caddy module information.
func (RedactEncoder) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.encoders.llm_redact",
		New: func() caddy.Module { return new(RedactEncoder) },
	}
}

// Provision loads the wrapped encoder.
func (e *RedactEncoder) Provision(ctx caddy.Context) error {
	if e.WrappedRaw == nil {
		je := &logging.JSONEncoder{}
		if err := je.Provision(ctx); err != nil {
			return fmt.Errorf("provisioning the json encoder: %w", err)
		}
		e.Encoder = je
	} else {
		val, err := ctx.LoadModule(e, "WrappedRaw")
		if err != nil {
			return fmt.Errorf("loading the wrapped encoder: %w", err)
		}
		e.Encoder = val.(zapcore.Encoder)
	}
	e.extra = make(map[string]bool, len(e.Headers))
	for _, h := range e.Headers {
		e.extra[strings.ToLower(h)] = true
	}
	return nil
}

// UnmarshalCaddyfile sets up the encoder from Caddyfile tokens:
//
//	format llm_redact {
//		wrap <encoder> ...
//		headers <name...>
//	}
func (e *RedactEncoder) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the encoder's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "wrap":
			if !d.NextArg() {
				return d.ArgErr()
			}
			name := d.Val()
			unm, err := caddyfile.UnmarshalModule(d, "caddy.logging.encoders."+name)
			if err != nil {
				return err
			}
			enc, ok := unm.(zapcore.Encoder)
			if !ok {
				return d.Errf("module %s (%T) is not a log encoder", name, unm)
			}
			e.WrappedRaw = caddyconfig.JSONModuleObject(enc, "format", name, nil)
		case "headers":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			e.Headers = append(e.Headers, args...)
		default:
			return d.Errf("unrecognized llm_redact subdirective %q", d.Val())
		}
	}
	return nil
}

// Clone implements zapcore.Encoder.
func (e *RedactEncoder) Clone() zapcore.Encoder {
	return &RedactEncoder{Headers: e.Headers, Encoder: e.Encoder.Clone(), extra: e.extra}
}

// EncodeEntry implements zapcore.Encoder: header maps in the fields are
// redacted as they are encoded, then known secrets are replaced in the
// encoded line.
func (e *RedactEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	var out []zapcore.Field
	for i, f := range fields {
		nf, changed := redactField(f, e.extra)
		if !changed {
			continue
		}
		if out == nil {
			out = make([]zapcore.Field, len(fields))
			copy(out, fields)
		}
		out[i] = nf
	}
	if out == nil {
		out = fields
	}
	buf, err := e.Encoder.EncodeEntry(ent, out)
	if err != nil || buf == nil {
		return buf, err
	}
	if b, changed := scrubLogBytes(buf.Bytes()); changed {
		nb := redactBufs.Get()
		_, _ = nb.Write(b)
		buf.Free()
		buf = nb
	}
	return buf, nil
}

var redactBufs = buffer.NewPool()

// redactField wraps the marshalers of a field so that header maps inside
// it are redacted as they are encoded.
func redactField(f zapcore.Field, extra map[string]bool) (zapcore.Field, bool) {
	switch f.Type {
	case zapcore.ObjectMarshalerType, zapcore.InlineMarshalerType:
		if m, ok := f.Interface.(zapcore.ObjectMarshaler); ok {
			f.Interface = redactMarshaler{m: m, extra: extra, headers: isHeaderKey(f.Key)}
			return f, true
		}
	case zapcore.ArrayMarshalerType:
		if m, ok := f.Interface.(zapcore.ArrayMarshaler); ok {
			f.Interface = redactArray{m: m, extra: extra}
			return f, true
		}
	case zapcore.ReflectType:
		if v, ok := redactReflected(f.Interface, isHeaderKey(f.Key), extra); ok {
			f.Interface = v
			return f, true
		}
	case zapcore.StringType:
		if isSecretHeader(f.Key, extra) && f.String != "" {
			// A header logged on its own, such as zap.String("authorization", ...).
			f.String = "REDACTED"
			return f, true
		}
	}
	return f, false
}

// isHeaderKey reports whether a field holds a header map.
func isHeaderKey(key string) bool {
	k := strings.ToLower(key)
	return k == "headers" || k == "header" || strings.HasSuffix(k, "_headers") || strings.HasSuffix(k, "_header")
}

// redactReflected returns a redacted copy of a header map logged with
// zap.Any.
func redactReflected(v any, headers bool, extra map[string]bool) (any, bool) {
	switch h := v.(type) {
	case http.Header:
		return redactHeader(h, extra), true
	case map[string][]string:
		return map[string][]string(redactHeader(http.Header(h), extra)), true
	case map[string]string:
		if !headers {
			return nil, false
		}
		out := make(map[string]string, len(h))
		for k, val := range h {
			if isSecretHeader(k, extra) {
				val = "REDACTED"
			}
			out[k] = val
		}
		return out, true
	}
	return nil, false
}

// redactMarshaler encodes an object through a redactObject.
type redactMarshaler struct {
	m       zapcore.ObjectMarshaler
	extra   map[string]bool
	headers bool
}

func (r redactMarshaler) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return r.m.MarshalLogObject(&redactObject{ObjectEncoder: enc, extra: r.extra, headers: r.headers})
}

// redactArray encodes an array whose objects go through a redactObject.
type redactArray struct {
	m     zapcore.ArrayMarshaler
	extra map[string]bool
}

func (r redactArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	return r.m.MarshalLogArray(&redactArrayEncoder{ArrayEncoder: enc, extra: r.extra})
}

type redactArrayEncoder struct {
	zapcore.ArrayEncoder
	extra map[string]bool
}

func (a *redactArrayEncoder) AppendObject(m zapcore.ObjectMarshaler) error {
	return a.ArrayEncoder.AppendObject(redactMarshaler{m: m, extra: a.extra})
}

func (a *redactArrayEncoder) AppendArray(m zapcore.ArrayMarshaler) error {
	return a.ArrayEncoder.AppendArray(redactArray{m: m, extra: a.extra})
}

// redactObject is the encoder an object's members are added to. In a
// header map (headers true), the values of credential headers are
// replaced.
type redactObject struct {
	zapcore.ObjectEncoder
	extra   map[string]bool
	headers bool
}

var redactedValue = zapcore.ArrayMarshalerFunc(func(enc zapcore.ArrayEncoder) error {
	enc.AppendString("REDACTED")
	return nil
})

func (o *redactObject) AddArray(key string, m zapcore.ArrayMarshaler) error {
	if o.headers && isSecretHeader(key, o.extra) {
		return o.ObjectEncoder.AddArray(key, redactedValue)
	}
	return o.ObjectEncoder.AddArray(key, redactArray{m: m, extra: o.extra})
}

func (o *redactObject) AddObject(key string, m zapcore.ObjectMarshaler) error {
	return o.ObjectEncoder.AddObject(key, redactMarshaler{m: m, extra: o.extra, headers: isHeaderKey(key)})
}

func (o *redactObject) AddString(key, value string) {
	if isSecretHeader(key, o.extra) {
		value = "REDACTED"
	}
	o.ObjectEncoder.AddString(key, value)
}

func (o *redactObject) AddByteString(key string, value []byte) {
	if isSecretHeader(key, o.extra) {
		value = []byte("REDACTED")
	}
	o.ObjectEncoder.AddByteString(key, value)
}

func (o *redactObject) AddReflected(key string, value any) error {
	if o.headers && isSecretHeader(key, o.extra) {
		o.ObjectEncoder.AddString(key, "REDACTED")
		return nil
	}
	if v, ok := redactReflected(value, isHeaderKey(key), o.extra); ok {
		value = v
	}
	return o.ObjectEncoder.AddReflected(key, value)
}

// The encoder itself is the root object of an entry's context fields
// (logger.With): its methods add to the wrapped encoder the same way.

func (e *RedactEncoder) root() *redactObject {
	return &redactObject{ObjectEncoder: e.Encoder, extra: e.extra}
}

// AddArray implements zapcore.ObjectEncoder.
func (e *RedactEncoder) AddArray(key string, m zapcore.ArrayMarshaler) error {
	return e.root().AddArray(key, m)
}

// AddObject implements zapcore.ObjectEncoder.
func (e *RedactEncoder) AddObject(key string, m zapcore.ObjectMarshaler) error {
	return e.root().AddObject(key, m)
}

// AddByteString implements zapcore.ObjectEncoder.
func (e *RedactEncoder) AddByteString(key string, v []byte) { e.root().AddByteString(key, v) }

// AddString implements zapcore.ObjectEncoder.
func (e *RedactEncoder) AddString(key, v string) { e.root().AddString(key, v) }

// AddReflected implements zapcore.ObjectEncoder.
func (e *RedactEncoder) AddReflected(key string, v any) error { return e.root().AddReflected(key, v) }

// Interface guards.
var (
	_ zapcore.Encoder       = (*RedactEncoder)(nil)
	_ caddy.Provisioner     = (*RedactEncoder)(nil)
	_ caddyfile.Unmarshaler = (*RedactEncoder)(nil)
)
