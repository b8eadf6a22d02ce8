package translate

import (
	"bytes"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// appendWithIDModel appends data, a chat completion or chunk, with its
// top-level "id" and "model" strings (a and b: results of a Get on data,
// their byte offsets known) replaced by va and vb. It is the one-pass form
// of two sjson.SetBytes calls, each of which would re-parse and copy the
// whole body; where an offset is unknown it falls back to them.
func appendWithIDModel(dst, data []byte, a gjson.Result, va string, b gjson.Result, vb string) []byte {
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

// insertMember adds the member key: value at the end of obj, a JSON object
// without that key, in place: obj's spare capacity takes it when it can.
// When obj already has the key (has), it is set with sjson instead.
func insertMember(obj []byte, key string, value []byte, has bool) []byte {
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 || has {
		out, err := sjson.SetRawBytes(obj, key, value)
		if err != nil {
			return obj
		}
		return out
	}
	sep := 0
	if !emptyObject(obj[:end]) {
		sep = 1
	}
	n := sep + len(key) + 3 + len(value) // [,]"key":value
	old := len(obj)
	obj = slices.Grow(obj, n)[:old+n]
	copy(obj[end+n:], obj[end:old])
	i := end
	if sep == 1 {
		obj[i] = ','
		i++
	}
	obj[i] = '"'
	i += 1 + copy(obj[i+1:], key)
	obj[i], obj[i+1] = '"', ':'
	copy(obj[i+2:], value)
	return obj
}

// emptyObject reports whether an object's bytes up to its closing brace
// hold no member yet.
func emptyObject(head []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(head), []byte("{")))) == 0
}
