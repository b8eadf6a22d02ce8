package translate

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestMessagesStreamToResponses(t *testing.T) {
	out, err := transcodeFile(t, "messages_stream_tools.sse", Messages, Responses)
	if err != nil {
		t.Fatal(err)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added" +
		strings.Repeat(" response.output_text.delta", 6) +
		" response.output_text.done response.content_part.done response.output_item.done" +
		" response.output_item.added" + strings.Repeat(" response.function_call_arguments.delta", 6) +
		" response.function_call_arguments.done response.output_item.done response.completed"
	if got := out.names(); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	for i, ev := range out {
		if n := gjson.Get(ev.data, "sequence_number").Int(); n != int64(i) {
			t.Errorf("event %d has sequence_number %d", i, n)
		}
		if typ := gjson.Get(ev.data, "type").Str; typ != ev.name {
			t.Errorf("event %s has type %s", ev.name, typ)
		}
	}
	created := []byte(out[0].data)
	convWant(t, created, "response.id", "resp_01KMfMhjmrAgkfuC8MqBA7BV")
	convWant(t, created, "response.object", "response")
	convWant(t, created, "response.status", "in_progress")
	convWant(t, created, "response.model", "claude-3-7-sonnet-20250219")
	convWant(t, created, "response.output", "[]")
	convWant(t, created, "response.usage", "null")

	const msgID = "msg_01KMfMhjmrAgkfuC8MqBA7BV_0"
	added := []byte(out[2].data)
	convWant(t, added, "output_index", "0")
	convWant(t, added, "item", `{"id":"`+msgID+`","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	part := []byte(out[3].data)
	convWant(t, part, "item_id", msgID)
	convWant(t, part, "content_index", "0")
	convWant(t, part, "part", `{"type":"output_text","annotations":[],"text":""}`)
	convWant(t, []byte(out[4].data), "delta", "I")
	convWant(t, []byte(out[4].data), "item_id", msgID)
	const text = "I'll help you find information about the Tigers game today and whether you should wear a coat. Let me search for the game details and check the weather."
	convWant(t, []byte(out[10].data), "text", text)
	convWant(t, []byte(out[11].data), "part.text", text)
	convWant(t, []byte(out[12].data), "item.status", "completed")
	convWant(t, []byte(out[12].data), "item.content.0.text", text)

	const fcID = "fc_01KMfMhjmrAgkfuC8MqBA7BV_1"
	call := []byte(out[13].data)
	convWant(t, call, "output_index", "1")
	convWant(t, call, "item", `{"id":"`+fcID+`","type":"function_call","status":"in_progress","arguments":"","call_id":"toolu_01RyoSbBmpFZHFddoeLDyFDF","name":"search"}`)
	convWant(t, []byte(out[14].data), "item_id", fcID)
	convWant(t, []byte(out[14].data), "delta", `{"quer`)
	const args = `{"query": "Detroit Tigers baseball game schedule today"}`
	convWant(t, []byte(out[20].data), "arguments", args)
	convWant(t, []byte(out[21].data), "item.arguments", args)
	convWant(t, []byte(out[21].data), "item.status", "completed")

	done := []byte(out[22].data)
	convWant(t, done, "response.status", "completed")
	convWant(t, done, "response.incomplete_details", "null")
	convWant(t, done, "response.output.#", "2")
	convWant(t, done, "response.output.0.content.0.text", text)
	convWant(t, done, "response.output.1.call_id", "toolu_01RyoSbBmpFZHFddoeLDyFDF")
	convWant(t, done, "response.output.1.arguments", args)
	convWant(t, done, "response.usage.input_tokens", "465")
	convWant(t, done, "response.usage.output_tokens", "88")
	convWant(t, done, "response.usage.total_tokens", "553")
}

func TestMessagesStreamToResponsesMaxTokens(t *testing.T) {
	tc := NewTranscoder(Messages, Responses)
	var out emitted
	for _, d := range []string{
		`{"type":"message_start","message":{"id":"msg_2","model":"m","usage":{"input_tokens":3,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Once"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" upon"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":2}}`,
	} {
		if err := tc.Event(SSEEvent{Data: []byte(d)}, out.emit); err != nil {
			t.Fatal(err)
		}
	}
	// The upstream stopped without message_stop; End closes the stream.
	if err := tc.End(out.emit); err != nil {
		t.Fatal(err)
	}
	last := []byte(out[len(out)-1].data)
	convWant(t, last, "type", "response.incomplete")
	convWant(t, last, "response.status", "incomplete")
	convWant(t, last, "response.incomplete_details.reason", "max_output_tokens")
	convWant(t, last, "response.output.0.content.0.text", "Once upon")
	if strings.Contains(out.names(), "reasoning") || strings.Contains(out[2].data, "hmm") {
		t.Errorf("thinking reached the client: %v", out)
	}
}

func TestChatStreamToResponses(t *testing.T) {
	out, err := transcodeFile(t, "chat_stream_text.sse", Chat, Responses)
	if err != nil {
		t.Fatal(err)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added" +
		strings.Repeat(" response.output_text.delta", 3) +
		" response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := out.names(); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	convWant(t, []byte(out[0].data), "response.id", "resp_9nhARrdUiJWEMd5plwV1Gc9NCjb9M")
	convWant(t, []byte(out[0].data), "response.created_at", "1721631035")
	convWant(t, []byte(out[7].data), "text", "我是助手。")
	done := []byte(out[10].data)
	convWant(t, done, "response.status", "completed")
	convWant(t, done, "response.output.0.type", "message")
	convWant(t, done, "response.output.0.role", "assistant")
	convWant(t, done, "response.output.0.content.0.type", "output_text")
	convWant(t, done, "response.output.0.content.0.text", "我是助手。")
	convWant(t, done, "response.usage", `{"input_tokens":14,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":17}`)
}

func TestChatStreamToResponsesNoUsage(t *testing.T) {
	out, err := transcodeFile(t, "chat_stream_parallel_tools.sse", Chat, Responses)
	if err != nil {
		t.Fatal(err)
	}
	done := []byte(out[len(out)-1].data)
	convWant(t, done, "type", "response.completed")
	convWant(t, done, "response.output.#", "2")
	convWant(t, done, "response.output.0.name", "search")
	convWant(t, done, "response.output.1.arguments", `{"city": "Detroit"}`)
	// The upstream reported no usage: the response says so rather than
	// counting zero tokens.
	convWant(t, done, "response.usage", "null")
}
