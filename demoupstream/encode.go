package demoupstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/modelgate/gateway/translate"
)

// appendString appends s as a JSON string. Like the real APIs it leaves <, >
// and & as they are (encoding/json would turn them into \u003c and friends),
// and it replaces invalid UTF-8 so that every event stays valid JSON.
func appendString(b []byte, s string) []byte { return translate.AppendJSONString(b, s) }

// appendInt appends an integer JSON value.
func appendInt(b []byte, n int) []byte {
	return strconv.AppendInt(b, int64(n), 10)
}

// appendEcho appends a request value as the response's echo of it, or
// fallback when the request did not send it. The raw value is compacted
// because a pretty-printed request would otherwise put newlines inside an
// SSE data line and end the event early.
func appendEcho(b []byte, v gjson.Result, fallback string) []byte {
	if !v.Exists() {
		return append(b, fallback...)
	}
	if !strings.ContainsAny(v.Raw, "\n\r") {
		return append(b, v.Raw...)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(v.Raw)); err != nil {
		return append(b, fallback...)
	}
	return append(b, out.Bytes()...)
}
