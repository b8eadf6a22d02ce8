package translate

// These helpers build JSON in append buffers. Keys are constants of the wire
// formats and need no escaping; every string value goes through
// AppendJSONString.

// appendKey appends `"key":` to an object under construction, preceded by a
// comma unless it is the object's first member.
func appendKey(dst []byte, key string) []byte {
	dst = appendSep(dst)
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendSep appends the comma between two members or elements, unless the
// container was just opened.
func appendSep(dst []byte) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' && dst[n-1] != '[' {
		dst = append(dst, ',')
	}
	return dst
}

// appendStringField appends a string member.
func appendStringField(dst []byte, key, value string) []byte {
	return AppendJSONString(appendKey(dst, key), value)
}

// appendCompactJSON appends a valid JSON value with the whitespace between
// tokens removed. Values copied from a client or an upstream may be
// pretty-printed; SSE data lines must not contain newlines, and tool-call
// arguments read better compact.
func appendCompactJSON(dst []byte, raw string) []byte {
	inString := false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

// compactJSON returns raw without whitespace between tokens, sharing raw's
// memory when it is already compact.
func compactJSON(raw string) string {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			return string(appendCompactJSON(make([]byte, 0, len(raw)), raw))
		}
	}
	return raw
}
