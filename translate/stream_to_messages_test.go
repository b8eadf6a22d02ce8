package translate

import (
	"strings"
	"testing"
)

func TestChatStreamToMessages(t *testing.T) {
	out, err := transcodeFile(t, "chat_stream_text.sse", Chat, Messages)
	if err != nil {
		t.Fatal(err)
	}
	want := "message_start content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := out.names(); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	start := []byte(out[0].data)
	convWant(t, start, "type", "message_start")
	convWant(t, start, "message.id", "msg_9nhARrdUiJWEMd5plwV1Gc9NCjb9M")
	convWant(t, start, "message.type", "message")
	convWant(t, start, "message.role", "assistant")
	convWant(t, start, "message.model", "gpt-4o-2024-05-13")
	convWant(t, start, "message.content", "[]")
	convWant(t, start, "message.stop_reason", "null")
	convWant(t, start, "message.usage.output_tokens", "0")
	convWant(t, []byte(out[1].data), "content_block", `{"type":"text","text":""}`)
	convWant(t, []byte(out[1].data), "index", "0")
	for i, text := range []string{"我是", "助手", "。"} {
		d := []byte(out[2+i].data)
		convWant(t, d, "index", "0")
		convWant(t, d, "delta.type", "text_delta")
		convWant(t, d, "delta.text", text)
	}
	convWant(t, []byte(out[5].data), "index", "0")
	delta := []byte(out[6].data)
	convWant(t, delta, "delta.stop_reason", "end_turn")
	convWant(t, delta, "delta.stop_sequence", "null")
	// The chat upstream reports input tokens only at the end, so they ride
	// on message_delta's cumulative usage.
	convWant(t, delta, "usage.input_tokens", "14")
	convWant(t, delta, "usage.output_tokens", "3")
	convWant(t, []byte(out[7].data), "type", "message_stop")
}

func TestChatStreamToMessagesParallelTools(t *testing.T) {
	out, err := transcodeFile(t, "chat_stream_parallel_tools.sse", Chat, Messages)
	if err != nil {
		t.Fatal(err)
	}
	want := "message_start content_block_start" + strings.Repeat(" content_block_delta", 9) + " content_block_stop" +
		" content_block_start" + strings.Repeat(" content_block_delta", 4) + " content_block_stop message_delta message_stop"
	if got := out.names(); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	first := []byte(out[1].data)
	convWant(t, first, "index", "0")
	convWant(t, first, "content_block", `{"type":"tool_use","id":"call_wdoegu51RD1EwLfvY4zESP45","name":"search","input":{}}`)
	convWant(t, []byte(out[2].data), "delta", `{"type":"input_json_delta","partial_json":"{\"qu"}`)
	second := []byte(out[12].data)
	convWant(t, second, "index", "1")
	convWant(t, second, "content_block.id", "call_lh0RgUrGyfkUdXvtZAjh55w5")
	convWant(t, second, "content_block.name", "weather")
	convWant(t, []byte(out[13].data), "index", "1")
	delta := []byte(out[18].data)
	convWant(t, delta, "delta.stop_reason", "tool_use")
	// No usage chunk came: the shape still requires usage.
	convWant(t, delta, "usage", `{"output_tokens":0}`)
}

func TestChatStreamToMessagesLength(t *testing.T) {
	tc := NewTranscoder(Chat, Messages)
	var out emitted
	for _, d := range []string{
		`{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":5}}}`,
	} {
		if err := tc.Event(SSEEvent{Data: []byte(d)}, out.emit); err != nil {
			t.Fatal(err)
		}
	}
	// A usage on the finish chunk (as some compatible servers send it) ends
	// the message without waiting for [DONE].
	if got := out.names(); got != "message_start content_block_start content_block_delta content_block_stop message_delta message_stop" {
		t.Fatalf("events %s", got)
	}
	delta := []byte(out[4].data)
	convWant(t, delta, "delta.stop_reason", "max_tokens")
	convWant(t, delta, "usage.input_tokens", "4")
	convWant(t, delta, "usage.cache_read_input_tokens", "5")
	convWant(t, delta, "usage.output_tokens", "1")
	if err := tc.Event(SSEEvent{Data: []byte("[DONE]")}, out.emit); err != nil || len(out) != 6 {
		t.Fatalf("[DONE] after the end: %v, %d events", err, len(out))
	}
}

func TestResponsesStreamToMessages(t *testing.T) {
	out, err := transcodeFile(t, "responses_stream_text.sse", Responses, Messages)
	if err != nil {
		t.Fatal(err)
	}
	want := "message_start content_block_start" + strings.Repeat(" content_block_delta", 17) + " content_block_stop message_delta message_stop"
	if got := out.names(); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	convWant(t, []byte(out[0].data), "message.id", "msg_0f9c4b2f224d858000695fa062bf048197a680f357bbb09000")
	convWant(t, []byte(out[0].data), "message.model", "gpt-4o-mini-2024-07-18")
	convWant(t, []byte(out[2].data), "delta.text", "Why")
	convWant(t, []byte(out[10].data), "delta.text", "?\n\n")
	delta := []byte(out[20].data)
	convWant(t, delta, "delta.stop_reason", "end_turn")
	convWant(t, delta, "usage.input_tokens", "11")
	convWant(t, delta, "usage.output_tokens", "18")
}

func TestResponsesStreamToMessagesTools(t *testing.T) {
	out, err := transcodeFile(t, "responses_stream_tools.sse", Responses, Messages)
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, ev := range out {
		if ev.name == "content_block_start" {
			starts = append(starts, ev.data)
		}
	}
	if len(starts) != 2 {
		t.Fatalf("%d blocks", len(starts))
	}
	convWant(t, []byte(starts[0]), "content_block", `{"type":"tool_use","id":"call_okunv0eUNIXE8kqY81fgYvCs","name":"search","input":{}}`)
	convWant(t, []byte(starts[1]), "content_block.id", "call_ydtVlYcFLcDX2C7dcHgKZjl3")
	convWant(t, []byte(out[len(out)-2].data), "delta.stop_reason", "tool_use")
}
