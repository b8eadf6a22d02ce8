package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// These helpers are shared by the client streams of the messages and
// responses shapes, which pass upstream events on with small edits.

// singleLine returns event data fit for one SSE data line. The SSE reader
// joins a multi-line event's data with newlines; written back as one line
// they would end the event early, so JSON is compacted and anything else has
// its line breaks replaced.
func singleLine(data []byte) []byte {
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return data
	}
	if gjson.ValidBytes(data) {
		return appendCompactJSON(make([]byte, 0, len(data)), string(data))
	}
	out := make([]byte, len(data))
	for i, c := range data {
		if c == '\n' || c == '\r' {
			c = ' '
		}
		out[i] = c
	}
	return out
}

// setRaw sets a member to pre-encoded JSON, keeping data unchanged when it is
// not an object or raw is not valid JSON.
func setRaw(data []byte, path string, raw []byte) []byte {
	if !gjson.ValidBytes(raw) {
		return data
	}
	out, err := sjson.SetRawBytes(data, path, singleLine(raw))
	if err != nil {
		return data
	}
	return out
}

// setStrings sets string members, keeping data unchanged where it cannot.
func setStrings(data []byte, path1, value1, path2, value2 string) []byte {
	if out, err := sjson.SetBytes(data, path1, value1); err == nil {
		data = out
	}
	if out, err := sjson.SetBytes(data, path2, value2); err == nil {
		data = out
	}
	return data
}
