package demoupstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Like the real APIs it leaves <, >
// and & as they are (encoding/json would turn them into \u003c and friends),
// and it replaces invalid UTF-8 so that every event stays valid JSON.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Legal in JSON but line terminators in JavaScript, which some
			// SSE consumers evaluate.
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendKey appends a JSON object key and its colon.
func appendKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

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
