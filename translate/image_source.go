package translate

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// The OpenAI shapes carry an image as one URL string, which may be a data:
// URL; the messages shape carries either a url source or a base64 source with
// the media type and data apart. These helpers move between the two without
// decoding the image.

// splitDataURL splits a data: URL into its media type and base64 payload. ok
// is false for anything that is not a data: URL. A payload that is not
// base64-encoded is percent-decoded and encoded, because the messages shape
// only accepts base64.
func splitDataURL(u string) (mediaType, data string, ok bool) {
	if len(u) < 5 || !strings.EqualFold(u[:5], "data:") {
		return "", "", false
	}
	header, payload, found := strings.Cut(u[5:], ",")
	if !found {
		return "", "", false
	}
	isBase64 := false
	if h, ok := strings.CutSuffix(header, ";base64"); ok {
		header, isBase64 = h, true
	}
	mediaType, _, _ = strings.Cut(header, ";")
	if mediaType == "" {
		mediaType = "text/plain"
	}
	if !isBase64 {
		raw, err := url.PathUnescape(payload)
		if err != nil {
			return "", "", false
		}
		payload = base64.StdEncoding.EncodeToString([]byte(raw))
	}
	return mediaType, payload, true
}

// appendImageURL appends an image part's address as a JSON string: its URL,
// or a data: URL rebuilt from a base64 source.
func appendImageURL(dst []byte, p *convPart) []byte {
	if p.url != "" || p.data == "" {
		return AppendJSONString(dst, p.url)
	}
	dst = append(dst, `"data:`...)
	dst = appendJSONStringBody(dst, p.mediaType)
	dst = append(dst, ";base64,"...)
	dst = appendJSONStringBody(dst, p.data)
	return append(dst, '"')
}

// appendJSONStringBody appends s escaped as the inside of a JSON string
// literal, without the quotes.
func appendJSONStringBody(dst []byte, s string) []byte {
	start := len(dst)
	dst = AppendJSONString(dst, s)
	// Drop the quotes AppendJSONString added around the escaped text.
	copy(dst[start:], dst[start+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// appendAnthropicImageSource appends the messages-shape source object of an
// image part: base64 with media type and data, or a url source.
func appendAnthropicImageSource(dst []byte, p *convPart) []byte {
	mediaType, data := p.mediaType, p.data
	if p.url != "" {
		if mt, d, ok := splitDataURL(p.url); ok {
			mediaType, data = mt, d
		} else {
			dst = append(dst, `{"type":"url","url":`...)
			dst = AppendJSONString(dst, p.url)
			return append(dst, '}')
		}
	}
	dst = append(dst, `{"type":"base64","media_type":`...)
	dst = AppendJSONString(dst, mediaType)
	dst = append(dst, `,"data":`...)
	dst = AppendJSONString(dst, data)
	return append(dst, '}')
}
