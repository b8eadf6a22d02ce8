package demoupstream

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// readEvents reads a stream's data payloads until it ends, and reports
// whether it ended cleanly (EOF after a complete event) or was cut.
func readEvents(t *testing.T, res *http.Response) (data []string, cut bool) {
	t.Helper()
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, "data: ") {
			data = append(data, strings.TrimSuffix(strings.TrimPrefix(line, "data: "), "\n"))
		}
		if err == io.EOF && line == "" {
			return data, false
		}
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) && err != io.EOF {
				t.Logf("stream ended with %v", err)
			}
			return data, true
		}
	}
}

func openRaw(t *testing.T, srv string, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv+path, strings.NewReader(body))
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	return res
}

// streamCase describes how to count one dialect's content pieces and
// recognise its proper end.
type streamCase struct {
	name    string
	path    string
	body    func(content string) string
	headers []string
	isPiece func(data string) bool
	isEnd   func(data string) bool
}

var streamCases = []streamCase{
	{
		name: "openai chat",
		path: "/v1/chat/completions",
		body: func(c string) string {
			return `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + c + `"}]}`
		},
		isPiece: func(d string) bool { return gjson.Get(d, "choices.0.delta.content").String() != "" },
		isEnd:   func(d string) bool { return d == "[DONE]" },
	},
	{
		name: "openai chat tool call",
		path: "/v1/chat/completions",
		body: func(c string) string {
			return `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + c + `"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"q":{"type":"string"}}}}}]}`
		},
		isPiece: func(d string) bool {
			return gjson.Get(d, "choices.0.delta.tool_calls.0.function.arguments").String() != ""
		},
		isEnd: func(d string) bool { return d == "[DONE]" },
	},
	{
		name: "responses",
		path: "/v1/responses",
		body: func(c string) string { return `{"model":"m","stream":true,"input":"` + c + `"}` },
		isPiece: func(d string) bool {
			return gjson.Get(d, "type").String() == "response.output_text.delta"
		},
		isEnd: func(d string) bool { return gjson.Get(d, "type").String() == "response.completed" },
	},
	{
		name: "anthropic",
		path: "/v1/messages",
		body: func(c string) string {
			return `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"` + c + `"}]}`
		},
		headers: anthropicHeaders,
		isPiece: func(d string) bool { return gjson.Get(d, "type").String() == "content_block_delta" },
		isEnd:   func(d string) bool { return gjson.Get(d, "type").String() == "message_stop" },
	},
	{
		name: "anthropic tool use",
		path: "/v1/messages",
		body: func(c string) string {
			return `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"` + c + `"}],"tools":[{"name":"f","input_schema":{"properties":{"q":{"type":"string"}}}}]}`
		},
		headers: anthropicHeaders,
		isPiece: func(d string) bool { return gjson.Get(d, "type").String() == "content_block_delta" },
		isEnd:   func(d string) bool { return gjson.Get(d, "type").String() == "message_stop" },
	},
}

func TestCutDirective(t *testing.T) {
	srv := serve(t, Config{})
	tests := []struct {
		content string
		pieces  int
		cut     bool
	}{
		{"one two three four five six", 7, false},
		{"one two three four five six [[cut:2]]", 2, true},
		{"[[cut:0]] one two", 0, true},
		// Fewer pieces than N: all of them, then the abort.
		{"short [[cut:99]]", -1, true},
	}
	for _, sc := range streamCases {
		for _, tc := range tests {
			t.Run(sc.name+"/"+tc.content, func(t *testing.T) {
				res := openRaw(t, srv.URL, sc.path, sc.body(tc.content), sc.headers...)
				data, cut := readEvents(t, res)
				if cut != tc.cut {
					t.Errorf("cut = %v, want %v; events %q", cut, tc.cut, data)
				}
				pieces, ended := 0, false
				for _, d := range data {
					if sc.isPiece(d) {
						pieces++
					}
					ended = ended || sc.isEnd(d)
				}
				if ended == tc.cut {
					t.Errorf("ended = %v with cut %v", ended, tc.cut)
				}
				// Tool-call streams have their own piece counts; the text
				// counts are only meaningful for text.
				isTool := strings.Contains(sc.name, "tool")
				if tc.pieces >= 0 && !isTool && pieces != tc.pieces {
					t.Errorf("got %d pieces, want %d", pieces, tc.pieces)
				}
				if tc.cut && tc.pieces >= 0 && pieces != tc.pieces {
					t.Errorf("cut after %d pieces, want %d", pieces, tc.pieces)
				}
				if tc.pieces < 0 && pieces == 0 {
					t.Error("no pieces before the abort")
				}
			})
		}
	}
}

func TestStreamHeaders(t *testing.T) {
	srv := serve(t, Config{})
	for _, sc := range streamCases {
		res := openRaw(t, srv.URL, sc.path, sc.body("hi"), append([]string{"Accept-Encoding: gzip"}, sc.headers...)...)
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", sc.name, ct)
		}
		if ce := res.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("%s: Content-Encoding %q", sc.name, ce)
		}
		if res.Header.Get("x-request-id") == "" {
			t.Errorf("%s: no x-request-id", sc.name)
		}
		if _, cut := readEvents(t, res); cut {
			t.Errorf("%s: stream did not end cleanly", sc.name)
		}
	}
}

func TestStreamUsageMatchesNonStream(t *testing.T) {
	// Streaming and non-streaming describe the same reply and usage.
	srv := serve(t, Config{})
	content := "some words [[words:12]] here"
	plain := call(t, srv, http.MethodPost, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+content+`"}]}`)
	res := openRaw(t, srv.URL, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"`+content+`"}]}`)
	data, _ := readEvents(t, res)
	var text strings.Builder
	var usage gjson.Result
	for _, d := range data {
		text.WriteString(gjson.Get(d, "choices.0.delta.content").String())
		if u := gjson.Get(d, "usage"); u.IsObject() {
			usage = u
		}
	}
	if want := gjson.Get(plain.body, "choices.0.message.content").String(); text.String() != want {
		t.Errorf("streamed %q, plain %q", text.String(), want)
	}
	if usage.Raw != gjson.Get(plain.body, "usage").Raw {
		t.Errorf("streamed usage %s, plain %s", usage.Raw, gjson.Get(plain.body, "usage").Raw)
	}
}
