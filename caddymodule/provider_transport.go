package caddymodule

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/modelgate/gateway/routing"
)

// providerTransport is the transport of one provider's reverse proxy. It
// wraps the proxy's own HTTP transport to do two things the proxy must not
// see done:
//
//   - It adds the provider's credential headers to a copy of each request
//     as it leaves. The proxy logs the request it handed to its transport
//     (at debug level on every round trip, at warn level when a stream is
//     cut), so the credentials are never on that request.
//   - It decodes any content coding of the answer (gzip, deflate, zstd),
//     whether or not the gateway asked for it, so that the body can be
//     read and rewritten. Go's transport only decodes the gzip it asked
//     for itself.
type providerTransport struct {
	base http.RoundTripper
	// creds are added to every request, replacing any value it has.
	creds http.Header
}

// credentialHeaders are p's credential and its configured headers, which
// may hold a key or an account id and are treated as secrets too.
// Configured headers come last, so they may replace the credential.
func credentialHeaders(p *routing.Provider) http.Header {
	h := make(http.Header, 1+len(p.Headers))
	if p.APIKey != "" {
		if p.Dialect == routing.DialectAnthropic {
			h.Set("X-Api-Key", p.APIKey)
		} else {
			h.Set("Authorization", "Bearer "+p.APIKey)
		}
	}
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	registerSecrets(p.APIKey)
	for k, v := range p.Headers {
		if credentialName(k) {
			registerSecrets(v)
		}
	}
	return h
}

// credentialName reports whether a configured header's name says it holds
// a credential or an account id, so that its value is also scrubbed from
// any text the gateway logs (every configured header stays off the
// proxy's log lines regardless; ordinary values such as a content type are
// not worth scrubbing from everything else).
func credentialName(name string) bool {
	if isSecretHeader(name, nil) {
		return true
	}
	n := strings.ToLower(name)
	for _, w := range [...]string{"key", "token", "secret", "auth", "organization", "project", "account", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RoundTrip implements http.RoundTripper.
func (t *providerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req
	if len(t.creds) > 0 {
		out = new(http.Request)
		*out = *req
		h := make(http.Header, len(req.Header)+len(t.creds))
		for k, v := range req.Header {
			h[k] = v
		}
		for k, v := range t.creds {
			h[k] = v
		}
		out.Header = h
	}
	res, err := t.base.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	// Whoever reads the response's request sees the proxy's copy, without
	// the credentials.
	res.Request = req
	if err := decodeContent(res); err != nil {
		res.Body.Close()
		return nil, err
	}
	return res, nil
}

// errContentCoding is an upstream answer in a content coding the gateway
// cannot decode.
type errContentCoding struct{ coding string }

func (e *errContentCoding) Error() string {
	return fmt.Sprintf("the upstream answered in content coding %q, which the gateway cannot decode", e.coding)
}

// decodeContent replaces res.Body by its decoded form when the upstream
// applied content codings, and removes the headers that described the
// encoded form. Codings are undone in the reverse of the order they were
// applied (RFC 9110 section 8.4).
func decodeContent(res *http.Response) error {
	var codings []string
	for _, v := range res.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	if len(codings) == 0 {
		return nil
	}
	body := res.Body
	for i := len(codings) - 1; i >= 0; i-- {
		dec, err := newDecoder(codings[i], body)
		if err != nil {
			return err
		}
		body = dec
	}
	res.Body = body
	res.Header.Del("Content-Encoding")
	res.Header.Del("Content-Length")
	res.Header.Del("Etag")
	res.ContentLength = -1
	res.Uncompressed = true
	return nil
}

// newDecoder reads the coding c of r lazily: nothing is read before the
// first Read, so that a stream's events are decoded as they arrive.
func newDecoder(c string, r io.ReadCloser) (io.ReadCloser, error) {
	switch c {
	case "gzip", "x-gzip", "deflate", "zstd":
	default:
		return nil, &errContentCoding{coding: c}
	}
	return &lazyDecoder{coding: c, src: r}, nil
}

// lazyDecoder opens its decoder on the first Read.
type lazyDecoder struct {
	coding string
	src    io.ReadCloser
	dec    io.Reader
	closer func()
	err    error
}

func (d *lazyDecoder) Read(p []byte) (int, error) {
	if d.dec == nil && d.err == nil {
		d.err = d.open()
	}
	if d.err != nil {
		return 0, d.err
	}
	return d.dec.Read(p)
}

func (d *lazyDecoder) open() error {
	switch d.coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(d.src)
		if err != nil {
			return fmt.Errorf("decoding the upstream's gzip answer: %w", err)
		}
		d.dec = zr
	case "deflate":
		// "deflate" is zlib-wrapped (RFC 9110), though some servers send
		// the raw format: the first two bytes tell them apart.
		br := bufio.NewReader(d.src)
		head, _ := br.Peek(2)
		if len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return fmt.Errorf("decoding the upstream's deflate answer: %w", err)
			}
			d.dec = zr
		} else {
			fr := flate.NewReader(br)
			d.dec, d.closer = fr, func() { fr.Close() }
		}
	case "zstd":
		zr, err := zstd.NewReader(d.src, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return fmt.Errorf("decoding the upstream's zstd answer: %w", err)
		}
		d.dec, d.closer = zr, zr.Close
	}
	return nil
}

// Close closes the decoder and the upstream body.
func (d *lazyDecoder) Close() error {
	if d.closer != nil {
		d.closer()
	}
	return d.src.Close()
}
