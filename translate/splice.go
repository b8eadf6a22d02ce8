package translate

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// appendWithStrings appends data with the string values at a and b (results
// of a Get on data, with their byte offsets known) replaced by va and vb.
// It is the one-pass form of two sjson.SetBytes calls, each of which would
// re-parse and copy the whole body. A result that is absent or whose
// offset is unknown falls back to sjson.
func appendWithStrings(dst, data []byte, a gjson.Result, va string, b gjson.Result, vb string) []byte {
	if !spliceable(a, data) || !spliceable(b, data) || a.Index == b.Index {
		out := setString(setString(data, "id", va), "model", vb)
		return append(dst, out...)
	}
	if a.Index > b.Index {
		a, va, b, vb = b, vb, a, va
	}
	dst = append(dst, data[:a.Index]...)
	dst = AppendJSONString(dst, va)
	dst = append(dst, data[a.Index+len(a.Raw):b.Index]...)
	dst = AppendJSONString(dst, vb)
	return append(dst, data[b.Index+len(b.Raw):]...)
}

// spliceable reports whether r is a string value whose bytes are at r.Index.
func spliceable(r gjson.Result, data []byte) bool {
	return r.Type == gjson.String && r.Index > 0 && r.Index+len(r.Raw) <= len(data) &&
		bytes.Equal(data[r.Index:r.Index+len(r.Raw)], []byte(r.Raw))
}

// appendObjectMember appends obj (a JSON object) with the member key: value added
// at its end, or set with sjson when obj already has that key.
func appendObjectMember(dst, obj []byte, key string, value []byte) []byte {
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 || gjson.GetBytes(obj, key).Exists() {
		out, err := sjson.SetRawBytes(obj, key, value)
		if err != nil {
			return append(dst, obj...)
		}
		return append(dst, out...)
	}
	dst = append(dst, obj[:end]...)
	if !emptyObject(obj[:end]) {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	dst = append(dst, value...)
	return append(dst, obj[end:]...)
}

// emptyObject reports whether an object's bytes up to its closing brace
// hold no member yet.
func emptyObject(head []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(head), []byte("{")))) == 0
}
