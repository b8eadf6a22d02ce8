package translate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// streamCase is an upstream stream fixture and what any client must see of
// it.
type streamCase struct {
	file     string
	upstream Dialect
	text     string
	calls    []ToolCall
	finish   string
	usage    Usage
	// failure is the message of an upstream failure; empty for a stream
	// that completes.
	failure string
}

const anglesText = "This is a famous philosophical question often used to illustrate medieval scholastic debates that seem pointless or overly abstract. The question \"How many angels can dance on the head of a pin?\" is typically cited as an example of useless speculation.\n\nHistorically, medieval theologians did debate the nature of angels - whether they were incorporeal beings, how they occupied space, and whether multiple angels could exist in the same location. However, there's little evidence they literally debated dancing angels on pinheads.\n\nThe question has no factual answer since it depends on assumptions about:\n- The existence and nature of angels\n- Whether incorporeal beings occupy physical space\n- What constitutes \"dancing\" for a spiritual entity\n- The size of both the pin and the angels\n\nIt's become a metaphor for overthinking trivial matters or getting lost in theoretical discussions disconnected from practical reality. Some use it to critique certain types of academic or theological debate, while others defend the value of exploring fundamental questions about existence and metaphysics.\n\nSo while unanswerable literally, it serves as an interesting lens for discussing the nature of philosophical inquiry itself."

var streamCases = []streamCase{
	{
		file: "chat_stream_text.sse", upstream: Chat,
		text: "我是助手。", finish: "stop",
		usage: Usage{InputTokens: 14, OutputTokens: 3, Known: true},
	},
	{
		file: "chat_stream_tool.sse", upstream: Chat,
		calls:  []ToolCall{{ID: "call_HjeqP7YeRkoNj0de9e3U4X4B", Name: "read_file", Arguments: `{"path":"README.md"}`}},
		finish: "tool_calls",
		usage:  Usage{InputTokens: 60, OutputTokens: 15, Known: true},
	},
	{
		file: "chat_stream_parallel_tools.sse", upstream: Chat,
		calls: []ToolCall{
			{ID: "call_wdoegu51RD1EwLfvY4zESP45", Name: "search", Arguments: `{"query": "Detroit Tigers game time today"}`},
			{ID: "call_lh0RgUrGyfkUdXvtZAjh55w5", Name: "weather", Arguments: `{"city": "Detroit"}`},
		},
		finish: "tool_calls",
	},
	{
		file: "messages_stream_text.sse", upstream: Messages,
		text: anglesText, finish: "stop",
		usage: Usage{InputTokens: 18, OutputTokens: 240, Known: true},
	},
	{
		file: "messages_stream_tools.sse", upstream: Messages,
		text:   "I'll help you find information about the Tigers game today and whether you should wear a coat. Let me search for the game details and check the weather.",
		calls:  []ToolCall{{ID: "toolu_01RyoSbBmpFZHFddoeLDyFDF", Name: "search", Arguments: `{"query": "Detroit Tigers baseball game schedule today"}`}},
		finish: "tool_calls",
		usage:  Usage{InputTokens: 465, OutputTokens: 88, Known: true},
	},
	{file: "messages_stream_error.sse", upstream: Messages, failure: "Overloaded"},
	{
		file: "responses_stream_text.sse", upstream: Responses,
		text: "Why did the scarecrow win an award?\n\nBecause he was outstanding in his field!", finish: "stop",
		usage: Usage{InputTokens: 11, OutputTokens: 18, Known: true},
	},
	{
		file: "responses_stream_tools.sse", upstream: Responses,
		calls: []ToolCall{
			{ID: "call_okunv0eUNIXE8kqY81fgYvCs", Name: "search", Arguments: `{"query":"Detroit Tigers game schedule October 10, 2023"}`},
			{ID: "call_ydtVlYcFLcDX2C7dcHgKZjl3", Name: "weather", Arguments: `{"city":"Detroit"}`},
		},
		finish: "tool_calls",
		usage:  Usage{InputTokens: 92, OutputTokens: 52, Known: true},
	},
	{file: "responses_stream_failed.sse", upstream: Responses, failure: "The model failed to generate a response."},
	{file: "responses_stream_error.sse", upstream: Responses, failure: "Something went wrong"},
}

const pipelineDelivery = `{"tier":"standard","served_by":"provider","cost_usd":0.0012}`

// runPipeline feeds a stream fixture one byte at a time through an SSEReader,
// the transcoder to the client's dialect and the client's ClientStream, the
// way the gateway does, and returns the bytes the client receives.
func runPipeline(t testing.TB, c streamCase, client Dialect) ([]byte, ClientStream) {
	t.Helper()
	return runWire(t, convFixture(t, c.file), c.upstream, client, 1)
}

// runWire runs upstream bytes, written step bytes at a time, through the
// pipeline to a client.
func runWire(t testing.TB, wire []byte, upstream, client Dialect, step int) ([]byte, ClientStream) {
	t.Helper()
	tc := NewTranscoder(upstream, client)
	cs := NewClientStream(client, "gw_0001", "router-1", true)
	var out []byte
	emit := func(event string, data []byte) { out = cs.Event(out, event, data) }
	var r SSEReader
	for i := 0; i < len(wire); i += step {
		r.Write(wire[i:min(i+step, len(wire))])
		for ev, ok := r.Next(); ok; ev, ok = r.Next() {
			if tc == nil {
				emit(string(ev.Event), ev.Data)
				continue
			}
			if err := tc.Event(ev, emit); err != nil {
				return cs.Fail(out, err.Error()), cs
			}
		}
	}
	if tc != nil {
		if err := tc.End(emit); err != nil {
			t.Fatal(err)
		}
	}
	return cs.Close(out, []byte(pipelineDelivery)), cs
}

func TestStreamPipeline(t *testing.T) {
	for _, c := range streamCases {
		for _, client := range []Dialect{Chat, Messages, Responses} {
			t.Run(c.file+"->"+client.String(), func(t *testing.T) {
				out, cs := runPipeline(t, c, client)
				events := readSSE(t, out)
				checkWellFormed(t, client, events, c.failure == "")
				if c.failure != "" {
					checkFailure(t, client, events, c.failure)
					return
				}
				rec, err := replay(t, client, events)
				if err != nil {
					t.Fatalf("client stream replays with error %v", err)
				}
				if got := rec.said.String(); got != c.text {
					t.Errorf("client text %q, want %q", got, c.text)
				}
				if !reflect.DeepEqual(rec.calls, c.calls) {
					t.Errorf("client tool calls %+v, want %+v", rec.calls, c.calls)
				}
				if rec.reason != c.finish {
					t.Errorf("client finish %q, want %q", rec.reason, c.finish)
				}
				if c.usage.Known && (rec.usage.input != int64(c.usage.InputTokens) || rec.usage.output != int64(c.usage.OutputTokens)) {
					t.Errorf("client usage %+v, want %+v", rec.usage, c.usage)
				}
				res := cs.Result()
				if res.Text != c.text || res.FinishReason != c.finish || !reflect.DeepEqual(nonNil(res.ToolCalls), nonNil(c.calls)) {
					t.Errorf("Result %+v, want text %q calls %+v finish %q", *res, c.text, c.calls, c.finish)
				}
				if got := cs.Usage(); got != c.usage {
					t.Errorf("Usage %+v, want %+v", got, c.usage)
				}
				if !cs.Done() && c.upstream == client {
					t.Error("Done is false after the upstream's terminal event")
				}
			})
		}
	}
}

func nonNil(calls []ToolCall) []ToolCall {
	if calls == nil {
		return []ToolCall{}
	}
	return calls
}

// checkWellFormed checks the client stream against its dialect's framing:
// valid JSON data, event names that match the data's type, the gateway's id
// everywhere an id is shown, the opening and closing events, and the
// delivery block on the last event of a complete stream.
func checkWellFormed(t *testing.T, client Dialect, events []sseEvent, complete bool) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	for i, ev := range events {
		if ev.data == "[DONE]" && client == Chat {
			if i != len(events)-1 {
				t.Errorf("[DONE] at %d of %d", i, len(events))
			}
			continue
		}
		if !gjson.Valid(ev.data) {
			t.Fatalf("event %d data is not JSON: %s", i, ev.data)
		}
		if client != Chat && ev.name != gjson.Get(ev.data, "type").Str {
			t.Errorf("event %d named %q carries type %q", i, ev.name, gjson.Get(ev.data, "type").Str)
		}
	}
	switch client {
	case Chat:
		checkChatFraming(t, events, complete)
	case Messages:
		checkMessagesFraming(t, events, complete)
	case Responses:
		checkResponsesFraming(t, events, complete)
	}
}

func checkChatFraming(t *testing.T, events []sseEvent, complete bool) {
	t.Helper()
	if r := gjson.Get(events[0].data, "choices.0.delta.role").Str; r != "assistant" {
		t.Errorf("first chunk role %q", r)
	}
	named := map[int64]bool{}
	for _, ev := range events {
		if ev.data == "[DONE]" || gjson.Get(ev.data, "error").Exists() {
			continue
		}
		if id := gjson.Get(ev.data, "id").Str; id != "gw_0001" {
			t.Errorf("chunk id %q", id)
		}
		if m := gjson.Get(ev.data, "model").Str; m != "router-1" {
			t.Errorf("chunk model %q", m)
		}
		gjson.Get(ev.data, "choices.0.delta.tool_calls").ForEach(func(_, tc gjson.Result) bool {
			i := tc.Get("index").Int()
			hasName := tc.Get("function.name").Exists() || tc.Get("id").Exists() || tc.Get("type").Exists()
			if hasName == named[i] {
				t.Errorf("tool call %d: id/type/name in fragment %s", i, tc.Raw)
			}
			named[i] = true
			return true
		})
	}
	if !complete {
		return
	}
	last := events[len(events)-1]
	if last.data != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", last.data)
	}
	if !gjson.Get(events[len(events)-2].data, "delivery.tier").Exists() {
		t.Errorf("no delivery on the last chunk: %s", events[len(events)-2].data)
	}
}

func checkMessagesFraming(t *testing.T, events []sseEvent, complete bool) {
	t.Helper()
	if events[0].name != "message_start" {
		t.Fatalf("first event %q", events[0].name)
	}
	if id := gjson.Get(events[0].data, "message.id").Str; id != "gw_0001" {
		t.Errorf("message id %q", id)
	}
	if m := gjson.Get(events[0].data, "message.model").Str; m != "router-1" {
		t.Errorf("message model %q", m)
	}
	open := -1
	next := 0
	for _, ev := range events[1:] {
		index := int(gjson.Get(ev.data, "index").Int())
		switch ev.name {
		case "content_block_start":
			if open >= 0 || index != next {
				t.Errorf("block %d starts with block %d open, expected index %d", index, open, next)
			}
			open = index
			next++
		case "content_block_delta":
			if index >= next {
				t.Errorf("delta for block %d that has not started", index)
			}
		case "content_block_stop":
			if index != open {
				t.Errorf("stop for block %d with block %d open", index, open)
			}
			open = -1
		case "message_delta", "message_stop":
			if open >= 0 {
				t.Errorf("%s with block %d open", ev.name, open)
			}
		}
	}
	if !complete {
		return
	}
	n := len(events)
	if events[n-2].name != "message_delta" || events[n-1].name != "message_stop" {
		t.Fatalf("stream ends with %q %q", events[n-2].name, events[n-1].name)
	}
	if !gjson.Get(events[n-2].data, "delivery.tier").Exists() {
		t.Errorf("no delivery on message_delta: %s", events[n-2].data)
	}
	if !gjson.Get(events[n-2].data, "delta.stop_reason").Exists() || !gjson.Get(events[n-2].data, "usage.output_tokens").Exists() {
		t.Errorf("message_delta without stop_reason or usage: %s", events[n-2].data)
	}
}

func checkResponsesFraming(t *testing.T, events []sseEvent, complete bool) {
	t.Helper()
	if events[0].name != "response.created" {
		t.Fatalf("first event %q", events[0].name)
	}
	seq := int64(-1)
	for _, ev := range events {
		if n := gjson.Get(ev.data, "sequence_number"); n.Exists() {
			if n.Int() <= seq {
				t.Errorf("%s has sequence_number %d after %d", ev.name, n.Int(), seq)
			}
			seq = n.Int()
		}
		if r := gjson.Get(ev.data, "response"); r.Exists() {
			if r.Get("id").Str != "gw_0001" || r.Get("model").Str != "router-1" {
				t.Errorf("%s response id %q model %q", ev.name, r.Get("id").Str, r.Get("model").Str)
			}
		}
	}
	if !complete {
		return
	}
	last := events[len(events)-1]
	if last.name != "response.completed" {
		t.Fatalf("last event %q", last.name)
	}
	if !gjson.Get(last.data, "response.delivery.tier").Exists() {
		t.Errorf("no response.delivery: %s", last.data)
	}
	if s := gjson.Get(last.data, "response.status").Str; s != "completed" {
		t.Errorf("status %q", s)
	}
}

// checkFailure checks that a failed upstream reaches the client as the
// client dialect's own error event, carrying the upstream's message.
func checkFailure(t *testing.T, client Dialect, events []sseEvent, message string) {
	t.Helper()
	var msg string
	for _, ev := range events {
		switch {
		case client == Chat && gjson.Get(ev.data, "error").Exists():
			msg = gjson.Get(ev.data, "error.message").Str
		case client == Messages && ev.name == "error":
			msg = gjson.Get(ev.data, "error.message").Str
		case client == Responses && ev.name == "error":
			msg = gjson.Get(ev.data, "message").Str
		case client == Responses && ev.name == "response.failed":
			msg = gjson.Get(ev.data, "response.error.message").Str
		}
	}
	if !strings.Contains(msg, message) {
		t.Errorf("error message %q, want it to contain %q", msg, message)
	}
	if client == Chat && events[len(events)-1].data == "[DONE]" {
		t.Error("a failed chat stream ends with [DONE]")
	}
}
