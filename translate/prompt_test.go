package translate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
)

// One conversation in the three shapes: system text, a text and two images
// (inline and by URL), an assistant text with a tool call, its result, a
// plain assistant answer and a last user turn.
const (
	conversationChat = `{"model":"openai/gpt-4o","temperature":0.2,"messages":[
	  {"role":"system","content":"You are a weather bot."},
	  {"role":"user","content":[
	    {"type":"text","text":"Weather in Paris? See the map."},
	    {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"}},
	    {"type":"image_url","image_url":{"url":"https://example.com/map.png"}}]},
	  {"role":"assistant","content":"Checking.","tool_calls":[
	    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"unit\": \"c\", \"city\": \"Paris\"}"}}]},
	  {"role":"tool","tool_call_id":"call_1","content":"18°C, sunny"},
	  {"role":"assistant","content":"It is 18°C and sunny."},
	  {"role":"user","content":"Thanks!"}]}`

	conversationMessages = `{"model":"anthropic/claude-sonnet-4-5","max_tokens":512,"system":"You are a weather bot.","messages":[
	  {"role":"user","content":[
	    {"type":"text","text":"Weather in Paris? See the map."},
	    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
	    {"type":"image","source":{"type":"url","url":"https://example.com/map.png"}}]},
	  {"role":"assistant","content":[
	    {"type":"text","text":"Checking."},
	    {"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris","unit":"c"}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"18°C, sunny"}]}]},
	  {"role":"assistant","content":"It is 18°C and sunny."},
	  {"role":"user","content":"Thanks!"}]}`

	conversationResponses = `{"model":"openai/gpt-4.1","instructions":"You are a weather bot.","input":[
	  {"role":"user","content":[
	    {"type":"input_text","text":"Weather in Paris? See the map."},
	    {"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="},
	    {"type":"input_image","image_url":"https://example.com/map.png"}]},
	  {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
	  {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"c\"}"},
	  {"type":"function_call_output","call_id":"call_1","output":"18°C, sunny"},
	  {"role":"assistant","content":"It is 18°C and sunny."},
	  {"role":"user","content":"Thanks!"}]}`
)

var conversationPrompt = Prompt{
	System: "You are a weather bot.",
	Turns: []Turn{
		{Role: "user", Parts: []Part{
			{Type: "text", Text: "Weather in Paris? See the map."},
			{Type: "image", URL: "data:image/png;base64,iVBORw0KGgo="},
			{Type: "image", URL: "https://example.com/map.png"},
		}},
		{Role: "assistant", Parts: []Part{
			{Type: "text", Text: "Checking."},
			{Type: "tool_call", ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`},
		}},
		{Role: "tool", Parts: []Part{{Type: "tool_result", ID: "call_1", Text: "18°C, sunny"}}},
		{Role: "assistant", Parts: []Part{{Type: "text", Text: "It is 18°C and sunny."}}},
		{Role: "user", Parts: []Part{{Type: "text", Text: "Thanks!"}}},
	},
}

const conversationCanonical = `{"system":"You are a weather bot.","turns":[` +
	`{"parts":[{"text":"Weather in Paris? See the map.","type":"text"},{"type":"image","url":"data:image/png;base64,iVBORw0KGgo="},{"type":"image","url":"https://example.com/map.png"}],"role":"user"},` +
	`{"parts":[{"text":"Checking.","type":"text"},{"arguments":{"city":"Paris","unit":"c"},"id":0,"name":"get_weather","type":"tool_call"}],"role":"assistant"},` +
	`{"parts":[{"id":0,"text":"18°C, sunny","type":"tool_result"}],"role":"tool"},` +
	`{"parts":[{"text":"It is 18°C and sunny.","type":"text"}],"role":"assistant"},` +
	`{"parts":[{"text":"Thanks!","type":"text"}],"role":"user"}]}`

func TestPromptSameAcrossShapes(t *testing.T) {
	for _, tc := range []struct {
		shape string
		parse parseFunc
		read  func([]byte) Prompt
		body  string
	}{
		{"chat", ParseChat, ChatPrompt, conversationChat},
		{"messages", ParseMessages, MessagesPrompt, conversationMessages},
		{"responses", ParseResponses, ResponsesPrompt, conversationResponses},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			if _, err := tc.parse([]byte(tc.body)); err != nil {
				t.Fatalf("fixture is not a valid request: %v", err)
			}
			p := tc.read([]byte(tc.body))
			if !reflect.DeepEqual(p, conversationPrompt) {
				t.Fatalf("got  %+v\nwant %+v", p, conversationPrompt)
			}
			if got := string(p.AppendCanonical(nil)); got != conversationCanonical {
				t.Fatalf("canonical:\ngot  %s\nwant %s", got, conversationCanonical)
			}
		})
	}
	if !json.Valid([]byte(conversationCanonical)) {
		t.Fatal("the canonical encoding is not JSON")
	}
}

// TestPromptSameAcrossAgentFixtures reads the recorded agent requests, one
// coding-agent conversation (thinking blocks, parallel tool calls, images)
// sent in each shape: each is a valid request and all three read the same.
func TestPromptSameAcrossAgentFixtures(t *testing.T) {
	var want string
	for _, tc := range []struct {
		file  string
		parse parseFunc
		read  func([]byte) Prompt
	}{
		{"testdata/chat_request_agent.json", ParseChat, ChatPrompt},
		{"testdata/messages_request_agent.json", ParseMessages, MessagesPrompt},
		{"testdata/responses_request_agent.json", ParseResponses, ResponsesPrompt},
	} {
		body, err := os.ReadFile(tc.file)
		if errors.Is(err, fs.ErrNotExist) {
			t.Skipf("fixture %s is not there", tc.file)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, verr := tc.parse(body); verr != nil {
			t.Fatalf("%s: %v", tc.file, verr)
		}
		p := tc.read(body)
		got := string(p.AppendCanonical(nil))
		if len(p.Turns) < 3 {
			t.Fatalf("%s: read only %d turns", tc.file, len(p.Turns))
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("%s reads differently:\n%s\nwant\n%s", tc.file, got, want)
		}
	}
}

// TestPromptToolIDsDoNotCount: each upstream mints its own tool call ids,
// so the same conversation with other ids encodes the same, while which
// result answers which call still counts.
func TestPromptToolIDsDoNotCount(t *testing.T) {
	renamed := strings.ReplaceAll(conversationMessages, "call_1", "toolu_01A09q90qw90lq917835lq9")
	a := ChatPrompt([]byte(conversationChat))
	b := MessagesPrompt([]byte(renamed))
	if string(a.AppendCanonical(nil)) != string(b.AppendCanonical(nil)) {
		t.Fatal("tool call ids change the canonical encoding")
	}

	parallel := func(first, second string) string {
		p := ChatPrompt([]byte(`{"messages":[{"role":"user","content":"Compare"},
		  {"role":"assistant","tool_calls":[
		    {"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}},
		    {"id":"b","function":{"name":"f","arguments":"{\"x\":2}"}}]},
		  {"role":"tool","tool_call_id":"` + first + `","content":"one"},
		  {"role":"tool","tool_call_id":"` + second + `","content":"two"}]}`))
		return string(p.AppendCanonical(nil))
	}
	if parallel("a", "b") == parallel("b", "a") {
		t.Fatal("swapping which result answers which call does not change the encoding")
	}
	if !strings.Contains(parallel("a", "zz"), `{"id":"zz","text":"two","type":"tool_result"}`) {
		t.Fatalf("a result for an unknown call lost its id: %s", parallel("a", "zz"))
	}
}

func TestPromptSystemText(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Prompt
		want string
	}{
		{"chat system and developer messages in order", ChatPrompt([]byte(`{"messages":[
		  {"role":"system","content":"one"},{"role":"developer","content":[{"type":"text","text":"two"},{"type":"text","text":"three"}]},
		  {"role":"user","content":"hi"},{"role":"system","content":"four"}]}`)), "one\ntwo\nthree\nfour"},
		{"messages system blocks", MessagesPrompt([]byte(`{"system":[{"type":"text","text":"one"},{"type":"text","text":"two"}],"messages":[{"role":"system","content":"three"}]}`)), "one\ntwo\nthree"},
		{"responses instructions lead", ResponsesPrompt([]byte(`{"input":[{"role":"developer","content":"two"}],"instructions":"one"}`)), "one\ntwo"},
		{"empty pieces are skipped", ChatPrompt([]byte(`{"messages":[{"role":"system","content":""},{"role":"system","content":"one"}]}`)), "one"},
	} {
		if tc.p.System != tc.want {
			t.Errorf("%s: system = %q, want %q", tc.name, tc.p.System, tc.want)
		}
	}
}

func TestPromptTurns(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Prompt
		want []Turn
	}{
		{
			"same-role messages merge",
			ChatPrompt([]byte(`{"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"b"}]}]}`)),
			[]Turn{{Role: "user", Parts: []Part{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}}},
		},
		{
			"tool results split out of a user message",
			MessagesPrompt([]byte(`{"messages":[{"role":"user","content":[
			  {"type":"tool_result","tool_use_id":"t1","content":"r1"},
			  {"type":"tool_result","tool_use_id":"t2","content":"r2","is_error":true},
			  {"type":"text","text":"and then?"}]}]}`)),
			[]Turn{
				{Role: "tool", Parts: []Part{{Type: "tool_result", ID: "t1", Text: "r1"}, {Type: "tool_result", ID: "t2", Text: "r2"}}},
				{Role: "user", Parts: []Part{{Type: "text", Text: "and then?"}}},
			},
		},
		{
			"chat tool call without text or arguments",
			ChatPrompt([]byte(`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"now","arguments":""}}]}]}`)),
			[]Turn{{Role: "assistant", Parts: []Part{{Type: "tool_call", ID: "c", Name: "now", Arguments: "{}"}}}},
		},
		{
			"messages tool_use without input",
			MessagesPrompt([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"now"}]}]}`)),
			[]Turn{{Role: "assistant", Parts: []Part{{Type: "tool_call", ID: "c", Name: "now", Arguments: "{}"}}}},
		},
		{
			"responses string input",
			ResponsesPrompt([]byte(`{"input":"Tell me a joke.","instructions":"Be funny."}`)),
			[]Turn{{Role: "user", Parts: []Part{{Type: "text", Text: "Tell me a joke."}}}},
		},
		{
			"responses function output as parts",
			ResponsesPrompt([]byte(`{"input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},{"type":"reasoning","summary":[]}]}`)),
			[]Turn{{Role: "tool", Parts: []Part{{Type: "tool_result", ID: "c", Text: "a\nb"}}}},
		},
		{
			"arguments that are not JSON stay a string",
			ChatPrompt([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{\"x\":"}}]}]}`)),
			[]Turn{{Role: "assistant", Parts: []Part{{Type: "tool_call", ID: "c", Name: "f", Arguments: `"{\"x\":"`}}}},
		},
		{
			"embeddings inputs",
			EmbeddingsPrompt([]byte(`{"input":["a",{"content":[{"type":"image_url","image_url":{"url":"https://x.test/i.png"}}]}]}`)),
			[]Turn{{Role: "user", Parts: []Part{{Type: "text", Text: "a"}, {Type: "image", URL: "https://x.test/i.png"}}}},
		},
	} {
		if !reflect.DeepEqual(tc.p.Turns, tc.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", tc.name, tc.p.Turns, tc.want)
		}
	}
}

func TestPromptOpaqueAndSkippedBlocks(t *testing.T) {
	enc := func(read func([]byte) Prompt, body string) string {
		p := read([]byte(body))
		return string(p.AppendCanonical(nil))
	}
	doc := func(id string) string {
		return `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"` + id + `"}},{"type":"text","text":"Summarize."}]}]}`
	}
	if enc(MessagesPrompt, doc("file_a")) == enc(MessagesPrompt, doc("file_b")) {
		t.Error("different documents read alike")
	}
	thinking := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"Greet back.","signature":"sig"},{"type":"redacted_thinking","data":"xx"},{"type":"text","text":"Hello!"}]}]}`
	plain := `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!"}]}`
	if enc(MessagesPrompt, thinking) != enc(ChatPrompt, plain) {
		t.Error("thinking blocks changed the prompt")
	}
	reasoning := `{"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[]},{"role":"assistant","content":"Hello!"}]}`
	if enc(ResponsesPrompt, reasoning) != enc(ChatPrompt, plain) {
		t.Error("reasoning items changed the prompt")
	}
	file := func(id string) string {
		return `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"` + id + `"},{"type":"input_file","file_id":"` + id + `"}]}]}`
	}
	if enc(ResponsesPrompt, file("file-1")) == enc(ResponsesPrompt, file("file-2")) {
		t.Error("images and files given by id read alike")
	}

	p := ResponsesPrompt([]byte(`{"input":[{"role":"user","content":"news?"},{"type":"web_search_call","id":"ws_1","status":"completed"},{"type":"computer_call_output","call_id":"c","output":{"type":"computer_screenshot"}}]}`))
	if len(p.Turns) != 3 || p.Turns[1].Role != "assistant" || p.Turns[1].Parts[0].Type != "web_search_call" ||
		p.Turns[2].Role != "tool" || p.Turns[2].Parts[0].Type != "computer_call_output" {
		t.Fatalf("built-in tool items: %+v", p.Turns)
	}
	if got := p.Turns[1].Parts[0].Text; got != `{"id":"ws_1","status":"completed","type":"web_search_call"}` {
		t.Errorf("opaque part text %s", got)
	}

	// A tool that returns a screenshot: the image is part of the result.
	shot := MessagesPrompt([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"done"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}]}`))
	want := []Turn{{Role: "tool", Parts: []Part{{Type: "tool_result", ID: "t", Text: "done"}, {Type: "image", URL: "data:image/png;base64,AAAA"}}}}
	if !reflect.DeepEqual(shot.Turns, want) {
		t.Errorf("tool result with an image:\ngot  %+v\nwant %+v", shot.Turns, want)
	}
}

// TestPromptCanonicalIgnoresModel: the prompt encoding reads content only.
func TestPromptCanonicalIgnoresModel(t *testing.T) {
	other := strings.Replace(conversationChat, `"openai/gpt-4o","temperature":0.2`, `"router-1","user":"u"`, 1)
	a, b := ChatPrompt([]byte(conversationChat)), ChatPrompt([]byte(other))
	if string(a.AppendCanonical(nil)) != string(b.AppendCanonical(nil)) {
		t.Fatal("model or sampling fields changed the prompt encoding")
	}
}

func BenchmarkChatPromptCanonical(b *testing.B) {
	body := realisticChatBody()
	var buf []byte
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		p := ChatPrompt(body)
		buf = p.AppendCanonical(buf[:0])
	}
}

func FuzzPrompt(f *testing.F) {
	f.Add([]byte(conversationChat))
	f.Add([]byte(conversationMessages))
	f.Add([]byte(conversationResponses))
	f.Add([]byte(`{"messages":"x","input":7,"system":{"a":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, read := range []func([]byte) Prompt{ChatPrompt, MessagesPrompt, ResponsesPrompt, EmbeddingsPrompt} {
			p := read(body)
			if enc := p.AppendCanonical(nil); !json.Valid(enc) {
				t.Fatalf("canonical encoding is not JSON: %q", enc)
			}
		}
	})
}
