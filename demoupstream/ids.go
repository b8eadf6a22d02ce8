package demoupstream

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
)

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random ids copy the shape of the real ones (prefix, alphabet and length) so
// that anything in the gateway that recognises or logs them sees the real
// thing. They need no cryptographic strength: math/rand/v2 is seeded per
// process and is cheap under load.

// randomID returns prefix followed by n characters drawn from alphabet.
func randomID(prefix string, n int, alphabet string) string {
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// hexDigits are the characters of a request id.
const hexDigits = "0123456789abcdef"

// newRequestID returns an id in the form of OpenAI's x-request-id.
func newRequestID() string { return randomID("req_", 32, hexDigits) }

// newChatID returns a chat completion id, as in "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT".
func newChatID() string { return randomID("chatcmpl-", 29, base62Digits) }

// newMessageID returns an Anthropic message id, as in "msg_01XFDUDYJgAACzvnptvVoYEL".
func newMessageID() string { return randomID("msg_01", 22, base62Digits) }

// newResponseID returns a Responses API response id.
func newResponseID() string { return randomID("resp_", 50, hexDigits) }

// newItemID returns a Responses API output item id: prefix "msg_" for a
// message, "fc_" for a function call.
func newItemID(prefix string) string { return randomID(prefix, 50, hexDigits) }

// callDigest is the deterministic part of a tool call id: the first 24 hex
// characters of sha256(name+arguments). The same call therefore has the same
// id in every dialect and every run, which lets tests name it in advance.
func callDigest(name, arguments string) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte(arguments))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))[:24]
}
