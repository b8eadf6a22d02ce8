package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// defectStream is one upstream dialect's stream as the defects test
// upstream sends it: whole SSE events, the place where a defect goes (after
// "Hello" has been sent), and the event put there for each kind of
// malformed event.
type defectStream struct {
	events  []string
	breakAt int
	// truncated is an event cut short mid-JSON; misshapen is valid JSON
	// without what its type needs. Both carry text that must never reach
	// the client.
	truncated, misshapen string
}

func sse(event, data string) string {
	if event == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + event + "\ndata: " + data + "\n\n"
}

func chatChunk(delta, finish string) string {
	return sse("", `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`+delta+`,"finish_reason":`+finish+`}]}`)
}

var defectStreams = map[string]defectStream{
	"/v1/chat/completions": {
		events: []string{
			chatChunk(`{"role":"assistant","content":""}`, "null"),
			chatChunk(`{"content":"Hello"}`, "null"),
			chatChunk(`{"content":" there"}`, "null"),
			chatChunk(`{}`, `"stop"`),
			sse("", `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`),
			sse("", "[DONE]"),
		},
		breakAt:   2,
		truncated: sse("", `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" lost`),
		misshapen: sse("", `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"m","choices":{"index":0,"delta":{"content":" lost"}}}`),
	},
	"/v1/messages": {
		events: []string{
			sse("message_start", `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`),
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}`),
			sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`),
			sse("message_stop", `{"type":"message_stop"}`),
		},
		breakAt:   3,
		truncated: sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" lost`),
		misshapen: sse("content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":" lost"}}`),
	},
	"/v1/responses": {
		events: []string{
			sse("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","object":"response","created_at":1,"status":"in_progress","model":"m","output":[],"usage":null}}`),
			sse("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_up","type":"message","status":"in_progress","role":"assistant","content":[]}}`),
			sse("response.content_part.added", `{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_up","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}`),
			sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_up","output_index":0,"content_index":0,"delta":"Hello"}`),
			sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_up","output_index":0,"content_index":0,"delta":" there"}`),
			sse("response.output_text.done", `{"type":"response.output_text.done","sequence_number":5,"item_id":"msg_up","output_index":0,"content_index":0,"text":"Hello there"}`),
			sse("response.content_part.done", `{"type":"response.content_part.done","sequence_number":6,"item_id":"msg_up","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"Hello there"}}`),
			sse("response.output_item.done", `{"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"msg_up","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hello there"}]}}`),
			sse("response.completed", `{"type":"response.completed","sequence_number":8,"response":{"id":"resp_up","object":"response","created_at":1,"status":"completed","model":"m","output":[{"id":"msg_up","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hello there"}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}}`),
		},
		breakAt:   4,
		truncated: sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_up","output_index":0,"content_index":0,"delta":" lost`),
		misshapen: sse("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_up","output_index":0,"content_index":0,"text":" lost"}`),
	},
}

// defectUpstream speaks the three upstream dialects and breaks its stream
// as the prompt asks: [[truncated]] or [[misshapen]] put a malformed event
// mid-stream and then finish the stream properly; [[cut]] drops the
// connection mid-stream; [[stall]] stops sending mid-stream and holds the
// connection open until the gateway gives up on it. Without a directive
// the stream is whole. The break comes once the client has had the events
// before it: the upstream waits there for the gate the prompt names
// ([[gate:<name>]]) to be opened.
func defectUpstream(t *testing.T, gates *sync.Map) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ds, ok := defectStreams[r.URL.Path]
		if !ok || !gjson.GetBytes(body, "stream").Bool() {
			http.Error(w, `{"error":{"message":"this upstream only streams"}}`, http.StatusBadRequest)
			return
		}
		mode := ""
		for _, m := range []string{"truncated", "misshapen", "cut", "stall"} {
			if bytes.Contains(body, []byte("[["+m+"]]")) {
				mode = m
			}
		}
		var gate chan struct{}
		if _, rest, ok := bytes.Cut(body, []byte("[[gate:")); ok {
			if name, _, ok := bytes.Cut(rest, []byte("]]")); ok {
				g, _ := gates.LoadOrStore(string(name), make(chan struct{}))
				gate = g.(chan struct{})
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i, ev := range ds.events {
			if i == ds.breakAt {
				if gate != nil {
					select {
					case <-gate:
					case <-r.Context().Done():
						return
					}
				}
				switch mode {
				case "truncated":
					_, _ = io.WriteString(w, ds.truncated)
				case "misshapen":
					_, _ = io.WriteString(w, ds.misshapen)
				case "cut":
					_ = rc.Flush()
					panic(http.ErrAbortHandler)
				case "stall":
					_ = rc.Flush()
					select {
					case <-r.Context().Done():
					case <-time.After(30 * time.Second):
						t.Errorf("%s: the gateway never gave up on a stalled stream", r.URL.Path)
					}
					return
				}
			}
			_, _ = io.WriteString(w, ev)
			_ = rc.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// clientEvent is one event of the gateway's stream to the client.
type clientEvent struct{ name, data string }

// readClientStream reads a whole SSE response, calling seen with each
// event as it arrives.
func readClientStream(t *testing.T, r io.Reader, seen func(clientEvent)) []clientEvent {
	t.Helper()
	var events []clientEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, clientEvent{name, v})
			seen(events[len(events)-1])
			name = ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("the client stream did not end cleanly: %v", err)
	}
	return events
}

// TestStreamDefects: an upstream stream that breaks after the client got
// its first events (a malformed event, a cut connection, a stall) ends the
// client's stream with its dialect's own error event, never its clean
// finish, and the call is recorded as failed with what was delivered; for
// every client dialect and each upstream dialect the gateway sends it to.
func TestStreamDefects(t *testing.T) {
	var gates sync.Map
	up := defectUpstream(t, &gates)
	var llm strings.Builder
	for _, p := range []struct{ name, dialect string }{{"flaky", "openai"}, {"flaky-chat", "openai_chat"}, {"flaky-claude", "anthropic"}} {
		fmt.Fprintf(&llm, "provider %s {\n\tdialect %s\n\tbase_url %s/v1\n\tstream_idle_timeout 300ms\n}\nmodel %s/m {\n\tprice 1 1\n}\n",
			p.name, p.dialect, up.URL, p.name)
	}
	g := startGatewayOpts(t, gatewayOpts{llm: llm.String()})

	routes := []struct{ path, model, upstream string }{
		{"/chat/completions", "flaky/m", "chat"},
		{"/chat/completions", "flaky-claude/m", "messages"},
		{"/messages", "flaky/m", "chat"},
		{"/messages", "flaky-claude/m", "messages"},
		{"/responses", "flaky/m", "responses"},
		{"/responses", "flaky-chat/m", "chat"},
		{"/responses", "flaky-claude/m", "messages"},
	}
	for _, mode := range []string{"whole", "truncated", "misshapen", "cut", "stall"} {
		for _, rt := range routes {
			t.Run(fmt.Sprintf("%s%s from %s", mode, rt.path, rt.upstream), func(t *testing.T) {
				gateName := t.Name()
				gate, _ := gates.LoadOrStore(gateName, make(chan struct{}))
				var once sync.Once
				open := func() { once.Do(func() { close(gate.(chan struct{})) }) }
				defer open()
				prompt := fmt.Sprintf("say hello [[%s]] [[gate:%s]]", mode, gateName)
				var body string
				switch rt.path {
				case "/chat/completions":
					body = fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":%q}]}`, rt.model, prompt)
				case "/messages":
					body = fmt.Sprintf(`{"model":%q,"stream":true,"max_tokens":50,"messages":[{"role":"user","content":%q}]}`, rt.model, prompt)
				case "/responses":
					body = fmt.Sprintf(`{"model":%q,"stream":true,"input":%q}`, rt.model, prompt)
				}
				req, _ := http.NewRequest(http.MethodPost, g.base+rt.path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+demoKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					raw, _ := io.ReadAll(resp.Body)
					t.Fatalf("status %d: %s", resp.StatusCode, raw)
				}
				// The upstream breaks its stream once "Hello" reached the client.
				events := readClientStream(t, resp.Body, func(ev clientEvent) {
					if strings.Contains(ev.data, "Hello") {
						open()
					}
				})
				checkDefectStream(t, rt.path, events, mode == "whole")

				id := ""
				for _, p := range []string{"id", "message.id", "response.id"} {
					if id = gjson.Get(events[0].data, p).String(); id != "" {
						break
					}
				}
				rec := g.get("/calls/"+id, http.StatusOK)
				if mode == "whole" {
					if rec.Get("status").String() != "succeeded" {
						t.Fatalf("whole stream recorded as %s: %.400s", rec.Get("status"), rec.Raw)
					}
					return
				}
				atts := rec.Get("attempts").Array()
				if rec.Get("status").String() != "failed" || rec.Get("error").String() == "" || len(atts) == 0 ||
					!strings.Contains(atts[len(atts)-1].Get("error").String(), "upstream stream broke") {
					t.Fatalf("record: want failed with the attempt's error: %.600s", rec.Raw)
				}
				if got := rec.Get("response_payload.choices.0.message.content").String(); !strings.HasPrefix(got, "Hello") || strings.Contains(got, "lost") {
					t.Errorf("record keeps %q of what was delivered: %.600s", got, rec.Raw)
				}
				if mode == "stall" && !strings.Contains(atts[len(atts)-1].Get("error").String(), "stalled") {
					t.Errorf("stall attempt error: %s", atts[len(atts)-1].Raw)
				}
			})
		}
	}
}

// checkDefectStream checks a client stream: every event JSON, "Hello"
// delivered, nothing of a malformed event passed on, and the end: the
// dialect's clean finish for a whole stream, its error event otherwise.
func checkDefectStream(t *testing.T, path string, events []clientEvent, whole bool) {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("events: %v", events)
	}
	var text strings.Builder
	for i, ev := range events {
		if ev.data == "[DONE]" && path == "/chat/completions" {
			if whole && i == len(events)-1 {
				continue
			}
			t.Fatalf("[DONE] in a broken stream: %v", events)
		}
		if !gjson.Valid(ev.data) {
			t.Fatalf("event %d is not JSON: %q", i, ev.data)
		}
		text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
		text.WriteString(gjson.Get(ev.data, "delta.text").String())
		if ev.name == "response.output_text.delta" {
			text.WriteString(gjson.Get(ev.data, "delta").String())
		}
		if !whole && (ev.name == "message_stop" || ev.name == "response.completed") {
			t.Fatalf("a broken stream claims to be complete: %v", events)
		}
	}
	if strings.Contains(text.String(), "lost") || !strings.HasPrefix(text.String(), "Hello") {
		t.Fatalf("client text %q", text.String())
	}
	last := events[len(events)-1]
	switch {
	case whole && path == "/chat/completions":
		if last.data != "[DONE]" {
			t.Fatalf("whole chat stream ends with %q", last.data)
		}
	case whole && path == "/messages":
		if last.name != "message_stop" {
			t.Fatalf("whole messages stream ends with %s", last.name)
		}
	case whole:
		if last.name != "response.completed" {
			t.Fatalf("whole responses stream ends with %s", last.name)
		}
	case path == "/chat/completions":
		if gjson.Get(last.data, "error.message").String() == "" {
			t.Fatalf("chat stream ends with %s", last.data)
		}
	case path == "/messages":
		if last.name != "error" || gjson.Get(last.data, "error.message").String() == "" {
			t.Fatalf("messages stream ends with %s %s", last.name, last.data)
		}
	default:
		if last.name != "response.failed" || gjson.Get(last.data, "response.status").String() != "failed" ||
			gjson.Get(last.data, "response.error.message").String() == "" {
			t.Fatalf("responses stream ends with %s %s", last.name, last.data)
		}
	}
}
