package demoupstream

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Buffers and gzip writers are pooled because the server is the upstream in
// load benchmarks: a response should cost a few appends, not allocations
// proportional to its size.
var (
	bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
	gzipPool   = sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return zw
	}}
	compressedPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// maxPooledBuffer keeps one huge response from pinning its buffer forever.
const maxPooledBuffer = 1 << 20

func getBuffer() *[]byte { return bufferPool.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	bufferPool.Put(b)
}

// writeJSON writes a complete JSON response, gzip-compressed when the client
// accepts it, as the real APIs do for every non-streamed body.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		out := compressedPool.Get().(*bytes.Buffer)
		defer func() {
			if out.Cap() <= maxPooledBuffer {
				out.Reset()
				compressedPool.Put(out)
			}
		}()
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(out)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gzipPool.Put(zw)
		body = out.Bytes()
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip: listed
// by name or by "*", with a q-value other than zero.
func acceptsGzip(header string) bool {
	for header != "" {
		var part string
		part, header, _ = strings.Cut(header, ",")
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.TrimSpace(coding)
		if !strings.EqualFold(coding, "gzip") && coding != "*" {
			continue
		}
		return !zeroQuality(params)
	}
	return false
}

// zeroQuality reports whether coding parameters carry q=0, which refuses the coding.
func zeroQuality(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		return err == nil && q == 0
	}
	return false
}
