package caddymodule

import (
	"net/http"
	"strconv"
)

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// writeJSON answers with a complete JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
