package translate

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
)

// TestCacheHintsPassThrough: cache_control marks reach an Anthropic
// upstream exactly as the client sent them; on the way to the OpenAI
// shapes, which cannot express them, they are dropped with no error.
func TestCacheHintsPassThrough(t *testing.T) {
	body := []byte(`{"model":"anthropic/claude","max_tokens":100,
		"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
		"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],
		"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`)
	if _, verr := ParseMessages(body); verr != nil {
		t.Fatalf("cache_control refused: %v", verr)
	}
	out, err := PrepareRequest(Messages, Messages, body, "claude-x", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"system.0.cache_control", "tools.0.cache_control", "messages.0.content.0.cache_control"} {
		if got, want := gjson.GetBytes(out, p).Raw, gjson.GetBytes(body, p).Raw; got != want {
			t.Errorf("%s: upstream got %s, client sent %s", p, got, want)
		}
	}
	for _, to := range []Dialect{Chat, Responses} {
		out, err := PrepareRequest(Messages, to, body, "gpt-x", false)
		if err != nil {
			t.Fatalf("to %v: %v", to, err)
		}
		if bytes.Contains(out, []byte("cache_control")) {
			t.Errorf("to %v: the hint reached an API without it: %s", to, out)
		}
		if !bytes.Contains(out, []byte("You are terse.")) || !bytes.Contains(out, []byte(`"hi"`)) {
			t.Errorf("to %v: content lost with the hints: %s", to, out)
		}
	}
}
