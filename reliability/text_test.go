package reliability

import (
	"encoding/json"
	"testing"
)

func TestTextOf(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"absent", ``, ""},
		{"null", `null`, ""},
		{"string", `"hello"`, "hello"},
		{"one message", `[{"role":"user","content":"hi"}]`, "hi"},
		{"content parts", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]`, "a\nb"},
		{"conversation", `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`, "system: be brief\n\nuser: hi"},
		{"chat request", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "hi"},
		{"messages request", `{"model":"m","system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "system: be brief\n\nuser: hi"},
		{"responses string", `{"model":"m","input":"hi"}`, "hi"},
		{"responses with instructions", `{"model":"m","instructions":"be brief","input":"hi"}`, "system: be brief\n\nhi"},
		{"responses items", `{"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}`, "hi"},
		{"single message object", `{"role":"assistant","content":"done"}`, "done"},
		{"other object", `{ "a" : [1, 2] }`, `{"a":[1,2]}`},
		{"number", `42`, "42"},
		{"plain array", `[1, "x"]`, `[1,"x"]`},
	}
	for _, tt := range tests {
		if got := textOf(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("%s: textOf(%s) = %q, want %q", tt.name, tt.raw, got, tt.want)
		}
	}
}

func TestAssistantText(t *testing.T) {
	tests := []struct {
		name, payload, want string
		ok                  bool
	}{
		{"chat", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Echo: hi"}}]}`, "Echo: hi", true},
		{"chat null content", `{"choices":[{"message":{"role":"assistant","content":null}}]}`, "", true},
		{"messages", `{"type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"f"},{"type":"text","text":"b"}]}`, "a\nb", true},
		{"responses output_text", `{"object":"response","output_text":"done","output":[]}`, "done", true},
		{"responses output", `{"object":"response","output":[{"type":"function_call","name":"f"},{"type":"message","content":[{"type":"output_text","text":"x"}]}]}`, "x", true},
		{"embeddings", `{"object":"list","data":[]}`, "", false},
		{"empty", ``, "", false},
	}
	for _, tt := range tests {
		got, ok := assistantText(json.RawMessage(tt.payload))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: assistantText = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzTextOf(f *testing.F) {
	f.Add(`[{"role":"user","content":"hi"}]`)
	f.Add(`{"messages":[{"role":"user","content":[{"text":"x"}]}],"system":[{"type":"text","text":"s"}]}`)
	f.Add(`{"input":[1,{"role":"user"}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		_ = textOf(json.RawMessage(raw))
		_, _ = assistantText(json.RawMessage(raw))
	})
}
