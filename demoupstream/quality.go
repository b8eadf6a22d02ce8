package demoupstream

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
)

// qualityMarker introduces a graded model's quality in its name, as in
// "demo-cheap-q80".
const qualityMarker = "-q"

// modelQuality returns the share of prompts, in percent, that model answers
// correctly, and whether its name grades it at all. The grade is the first
// "-q" followed by 1 to 3 digits with a value of at most 100 that end the
// name or are followed by a character other than a letter or digit, so that
// "demo-quick" or "demo-q1000" are ordinary names.
func modelQuality(model string) (int, bool) {
	rest := model
	for {
		i := strings.Index(rest, qualityMarker)
		if i < 0 {
			return 0, false
		}
		rest = rest[i+len(qualityMarker):]
		n, digits := 0, 0
		for digits < len(rest) && isDigit(rest[digits]) {
			n = n*10 + int(rest[digits]-'0')
			digits++
			if digits > 3 {
				break
			}
		}
		if digits >= 1 && digits <= 3 && n <= 100 && (digits == len(rest) || !isAlnum(rest[digits])) {
			return n, true
		}
	}
}

// answersCorrectly reports whether a model of the given quality answers
// the prompt whose last user text is text correctly. The choice is a hash
// of model and text rather than a random draw, so that a repeated prompt
// gets the same answer, as a fingerprint-keyed cache or router expects, and
// tests can rely on it.
func answersCorrectly(model, text string, quality int) bool {
	return promptBucket(model, text) < quality
}

// promptBucket maps a (model, last user text) pair to 0..99: the first 8
// bytes of sha256(model + "\x00" + text), big-endian, modulo 100. The NUL
// keeps "ab"+"c" and "a"+"bc" apart.
func promptBucket(model, text string) int {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return int(binary.BigEndian.Uint64(sum[:8]) % 100)
}

// echoReply is the reply text to a plain prompt: "Echo: <text>", or for a
// graded model whose grade misses this prompt, "Wrong: <text>". Both have
// the same number of words, so usage does not tell them apart.
func echoReply(model, text string) string {
	prefix := "Echo: "
	if q, graded := modelQuality(model); graded && !answersCorrectly(model, text, q) {
		prefix = "Wrong: "
	}
	return normalizeSpace(prefix + text)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
