package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestMessagesStreamToChat(t *testing.T) {
	out, err := transcodeFile(t, "messages_stream_tools.sse", Messages, Chat)
	if err != nil {
		t.Fatal(err)
	}
	// One chunk for the start, six text deltas, the tool call's first
	// fragment and six argument fragments (the empty one is dropped), the
	// finish chunk and the usage chunk.
	if len(out) != 16 {
		t.Fatalf("%d chunks: %v", len(out), out)
	}
	for i, ev := range out {
		if ev.name != "" {
			t.Errorf("chunk %d has event name %q", i, ev.name)
		}
		d := []byte(ev.data)
		convWant(t, d, "id", "chatcmpl-01KMfMhjmrAgkfuC8MqBA7BV")
		convWant(t, d, "object", "chat.completion.chunk")
		convWant(t, d, "model", "claude-3-7-sonnet-20250219")
		if ev.data == "[DONE]" {
			t.Error("the transcoder wrote [DONE]")
		}
	}
	first := []byte(out[0].data)
	convWant(t, first, "choices.0.delta.role", "assistant")
	convWant(t, first, "choices.0.delta.content", "")
	convWant(t, first, "choices.0.finish_reason", "null")
	convWant(t, []byte(out[1].data), "choices.0.delta.content", "I")
	convWant(t, []byte(out[6].data), "choices.0.delta.content", " and check the weather.")

	call := []byte(out[7].data)
	convWant(t, call, "choices.0.delta.tool_calls.0.index", "0")
	convWant(t, call, "choices.0.delta.tool_calls.0.id", "toolu_01RyoSbBmpFZHFddoeLDyFDF")
	convWant(t, call, "choices.0.delta.tool_calls.0.type", "function")
	convWant(t, call, "choices.0.delta.tool_calls.0.function.name", "search")
	convWant(t, call, "choices.0.delta.tool_calls.0.function.arguments", "")
	frag := []byte(out[8].data)
	convWant(t, frag, "choices.0.delta.tool_calls.0.index", "0")
	convWant(t, frag, "choices.0.delta.tool_calls.0.function.arguments", `{"quer`)
	convAbsent(t, frag, "choices.0.delta.tool_calls.0.id", "choices.0.delta.tool_calls.0.type", "choices.0.delta.tool_calls.0.function.name")

	fin := []byte(out[14].data)
	convWant(t, fin, "choices.0.delta", "{}")
	convWant(t, fin, "choices.0.finish_reason", "tool_calls")
	usage := []byte(out[15].data)
	convWant(t, usage, "choices", "[]")
	convWant(t, usage, "usage.prompt_tokens", "465")
	convWant(t, usage, "usage.completion_tokens", "88")
	convWant(t, usage, "usage.total_tokens", "553")
}

func TestMessagesStreamToChatStopReasons(t *testing.T) {
	for _, c := range []struct{ stop, finish string }{
		{"end_turn", "stop"}, {"stop_sequence", "stop"}, {"max_tokens", "length"},
		{"tool_use", "tool_calls"}, {"refusal", "content_filter"},
	} {
		tc := NewTranscoder(Messages, Chat)
		var out emitted
		for _, ev := range []SSEEvent{
			{Event: []byte("message_start"), Data: []byte(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3,"cache_read_input_tokens":4,"output_tokens":1}}}`)},
			{Event: []byte("message_delta"), Data: []byte(`{"type":"message_delta","delta":{"stop_reason":"` + c.stop + `"},"usage":{"output_tokens":2}}`)},
			{Event: []byte("message_stop"), Data: []byte(`{"type":"message_stop"}`)},
		} {
			if err := tc.Event(ev, out.emit); err != nil {
				t.Fatal(err)
			}
		}
		if len(out) != 3 {
			t.Fatalf("%s: %d chunks", c.stop, len(out))
		}
		convWant(t, []byte(out[1].data), "choices.0.finish_reason", c.finish)
		u := []byte(out[2].data)
		// Cached prompt tokens count as prompt tokens in the chat shape.
		convWant(t, u, "usage.prompt_tokens", "7")
		convWant(t, u, "usage.prompt_tokens_details.cached_tokens", "4")
		convWant(t, u, "usage.completion_tokens", "2")
	}
}

func TestResponsesStreamToChat(t *testing.T) {
	out, err := transcodeFile(t, "responses_stream_tools.sse", Responses, Chat)
	if err != nil {
		t.Fatal(err)
	}
	var calls []gjson.Result
	for _, ev := range out {
		calls = append(calls, gjson.Get(ev.data, "choices.0.delta.tool_calls.0"))
	}
	// start, call 0 and its 15 fragments, call 1 and its 5 fragments, finish,
	// usage.
	if len(out) != 25 {
		t.Fatalf("%d chunks", len(out))
	}
	convWant(t, []byte(out[0].data), "id", "chatcmpl-684b3e6ac540819ba8d482c36f131496091e30eaec0a395b")
	convWant(t, []byte(out[0].data), "created", "1749761642")
	if calls[1].Get("id").Str != "call_okunv0eUNIXE8kqY81fgYvCs" || calls[1].Get("function.name").Str != "search" || calls[1].Get("index").Int() != 0 {
		t.Errorf("first call %s", calls[1].Raw)
	}
	if calls[17].Get("id").Str != "call_ydtVlYcFLcDX2C7dcHgKZjl3" || calls[17].Get("function.name").Str != "weather" || calls[17].Get("index").Int() != 1 {
		t.Errorf("second call %s", calls[17].Raw)
	}
	if calls[18].Get("function.arguments").Str != "{" || calls[18].Get("index").Int() != 1 {
		t.Errorf("second call's first fragment %s", calls[18].Raw)
	}
	convWant(t, []byte(out[23].data), "choices.0.finish_reason", "tool_calls")
	convWant(t, []byte(out[24].data), "usage.prompt_tokens", "92")
	convWant(t, []byte(out[24].data), "usage.completion_tokens", "52")
}

func TestResponsesStreamToChatIncomplete(t *testing.T) {
	tc := NewTranscoder(Responses, Chat)
	var out emitted
	for _, d := range []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_9","created_at":5,"model":"m","status":"in_progress"}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_9","type":"message","status":"in_progress","content":[],"role":"assistant"}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_9","output_index":0,"content_index":0,"delta":"Once upon"}`,
		`{"type":"response.incomplete","sequence_number":3,"response":{"id":"resp_9","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":16,"total_tokens":21}}}`,
	} {
		if err := tc.Event(SSEEvent{Data: []byte(d)}, out.emit); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 4 {
		t.Fatalf("%d chunks: %v", len(out), out)
	}
	convWant(t, []byte(out[1].data), "choices.0.delta.content", "Once upon")
	convWant(t, []byte(out[2].data), "choices.0.finish_reason", "length")
	convWant(t, []byte(out[3].data), "usage.total_tokens", "21")
}

func TestChatWriterEmitsAsSoonAsFormed(t *testing.T) {
	tc := NewTranscoder(Messages, Chat)
	var r SSEReader
	r.Write(convFixture(t, "messages_stream_text.sse"))
	var out emitted
	for ev, ok := r.Next(); ok; ev, ok = r.Next() {
		before := len(out)
		if err := tc.Event(ev, out.emit); err != nil {
			t.Fatal(err)
		}
		if string(ev.Event) == "content_block_delta" && len(out) != before+1 {
			t.Fatalf("a text delta produced %d chunks", len(out)-before)
		}
	}
}
