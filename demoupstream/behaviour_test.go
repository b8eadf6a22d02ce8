package demoupstream

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		in    string
		clean string
		want  directives
	}{
		{"hello  world ", "hello world", directives{cut: -1, words: -1}},
		{"", "", directives{cut: -1, words: -1}},
		{"fail [[status:429]] now", "fail now", directives{status: 429, cut: -1, words: -1}},
		{"[[cut:2]]stream[[sleep:15]]", "stream", directives{cut: 2, sleep: 15 * time.Millisecond, words: -1}},
		{"give [[words:5]]", "give", directives{cut: -1, words: 5}},
		{"[[words:999999999]]", "", directives{cut: -1, words: maxWords}},
		{"twice [[cut:1]] [[cut:3]]", "twice", directives{cut: 3, words: -1}},
		{"[[cut:0]]", "", directives{cut: 0, words: -1}},
		// Not directives: unknown name, no digits, sign, too many digits, unclosed.
		{"[[foo:1]] x", "[[foo:1]] x", directives{cut: -1, words: -1}},
		{"[[cut:]] [[cut:x]] [[cut:-1]]", "[[cut:]] [[cut:x]] [[cut:-1]]", directives{cut: -1, words: -1}},
		{"[[cut:1234567890]]", "[[cut:1234567890]]", directives{cut: -1, words: -1}},
		{"open [[cut:1", "open [[cut:1", directives{cut: -1, words: -1}},
		{"[[[cut:1]]]", "[ ]", directives{cut: 1, words: -1}},
		{"a\t[[status:500]]\nb", "a b", directives{status: 500, cut: -1, words: -1}},
	}
	for _, tc := range tests {
		clean, d := parseDirectives(tc.in)
		if clean != tc.clean || d != tc.want {
			t.Errorf("parseDirectives(%q) = %q, %+v; want %q, %+v", tc.in, clean, d, tc.clean, tc.want)
		}
	}
}

func TestBuildArguments(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{"all types in property order", `{"properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"a":{"type":"array"},"o":{"type":"object"},"x":{"enum":[1]}}}`,
			`{"s":"the text","i":42,"n":42,"b":true,"a":[],"o":{},"x":null}`},
		{"required keeps property order", `{"properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"}},"required":["c","a"]}`,
			`{"a":"the text","c":true}`},
		{"empty required", `{"properties":{"a":{"type":"string"}},"required":[]}`, `{}`},
		{"nullable type list", `{"properties":{"a":{"type":["null","integer"]}}}`, `{"a":42}`},
		{"no properties", `{"type":"object"}`, `{}`},
		{"no schema", ``, `{}`},
		{"escaped names", `{"properties":{"q\"k":{"type":"string"}}}`, `{"q\"k":"the text"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildArguments(gjson.Parse(tc.schema), "the text"); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCallDigest(t *testing.T) {
	sum := sha256.Sum256([]byte(`get_weather{"city":"Paris"}`))
	want := hex.EncodeToString(sum[:])[:24]
	if got := callDigest("get_weather", `{"city":"Paris"}`); got != want {
		t.Errorf("callDigest = %s, want %s", got, want)
	}
}

func TestCountWords(t *testing.T) {
	tests := map[string]int{
		"":                   0,
		"   ":                0,
		"one":                1,
		" one  two\tthree\n": 3,
		"a\u00a0b\u2003c":    3,
		"[[words:3]] hi":     2,
		"héllo wörld":        2,
	}
	for in, want := range tests {
		if got := countWords(in); got != want {
			t.Errorf("countWords(%q) = %d, want %d", in, got, want)
		}
		if want != len(strings.Fields(in)) {
			t.Errorf("test case %q disagrees with strings.Fields", in)
		}
	}
}

func TestNormalizeSpace(t *testing.T) {
	tests := map[string]string{
		"":              "",
		"a b":           "a b",
		" a b":          "a b",
		"a b ":          "a b",
		"a  b":          "a b",
		"a\tb":          "a b",
		"a\u00a0b":      "a b",
		"Echo: ":        "Echo:",
		"héllo  wörld ": "héllo wörld",
	}
	for in, want := range tests {
		if got := normalizeSpace(in); got != want {
			t.Errorf("normalizeSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPieces(t *testing.T) {
	tests := map[string][]string{
		"":               nil,
		"Echo:":          {"Echo:"},
		"Echo: hi there": {"Echo:", " hi", " there"},
	}
	for in, want := range tests {
		got := pieces(in)
		if !slices.Equal(got, want) {
			t.Errorf("pieces(%q) = %q, want %q", in, got, want)
		}
		if strings.Join(got, "") != in {
			t.Errorf("pieces(%q) do not concatenate back", in)
		}
	}
}

func TestFragments(t *testing.T) {
	for _, args := range []string{`{}`, `{"a":1}`, `{"city":"Weather in Paris?","days":42}`, `{"q":"日本語のテキスト"}`, `{"e":"é"}`} {
		got := fragments(args)
		if len(got) < 2 {
			t.Errorf("fragments(%s) = %q, want at least 2", args, got)
		}
		if strings.Join(got, "") != args {
			t.Errorf("fragments(%s) = %q, do not concatenate back", args, got)
		}
		for _, f := range got {
			if !utf8ValidString(f) {
				t.Errorf("fragments(%s) cut a rune: %q", args, f)
			}
		}
	}
}

func utf8ValidString(s string) bool { return strings.ToValidUTF8(s, "\ufffd") == s }

func TestNumberedWords(t *testing.T) {
	if got := numberedWords(0); got != "" {
		t.Errorf("numberedWords(0) = %q", got)
	}
	if got := numberedWords(4); got != "w1 w2 w3 w4" {
		t.Errorf("numberedWords(4) = %q", got)
	}
}

func TestAnswer(t *testing.T) {
	weather := tool{name: "get_weather", schema: gjson.Parse(`{"properties":{"city":{"type":"string"}}}`)}
	clock := tool{name: "get_time", schema: gjson.Parse(`{"properties":{"utc":{"type":"boolean"}}}`)}
	tests := []struct {
		name     string
		turn     turn
		text     string
		call     string // name(arguments)
		outTok   int
		wantDirs directives
	}{
		{name: "echo", turn: turn{userText: "  hi   there ", inputWords: 7}, text: "Echo: hi there", outTok: 3},
		{name: "echo empty", turn: turn{}, text: "Echo:", outTok: 1},
		{name: "words", turn: turn{userText: "[[words:3]] ignored"}, text: "w1 w2 w3", outTok: 3},
		{name: "words zero", turn: turn{userText: "[[words:0]]"}, text: "", outTok: 0},
		{name: "tool result wins over words", turn: turn{userText: "[[words:3]]", endsWithToolResult: true, toolResult: " 21  C ", tools: []tool{weather}}, text: "Tool result: 21 C", outTok: 4},
		{name: "first tool", turn: turn{userText: "Paris [[cut:1]]", tools: []tool{weather, clock}}, call: `get_weather({"city":"Paris"})`, outTok: 4, wantDirs: directives{cut: 1, words: -1}},
		{name: "forced tool", turn: turn{userText: "now", tools: []tool{weather, clock}, forced: "get_time"}, call: `get_time({"utc":true})`, outTok: 3},
		{name: "tools off", turn: turn{userText: "hi", tools: []tool{weather}, toolsOff: true}, text: "Echo: hi", outTok: 2},
		{name: "status kept", turn: turn{userText: "x [[status:503]]"}, text: "Echo: x", outTok: 2, wantDirs: directives{status: 503, cut: -1, words: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := answer(&tc.turn)
			if r.inputTokens != tc.turn.inputWords {
				t.Errorf("inputTokens = %d, want %d", r.inputTokens, tc.turn.inputWords)
			}
			if r.outputTokens != tc.outTok {
				t.Errorf("outputTokens = %d, want %d", r.outputTokens, tc.outTok)
			}
			if tc.call != "" {
				if r.call == nil {
					t.Fatalf("no call, text %q", r.text)
				}
				if got := r.call.name + "(" + r.call.arguments + ")"; got != tc.call {
					t.Errorf("call = %s, want %s", got, tc.call)
				}
				if r.call.digest != callDigest(r.call.name, r.call.arguments) {
					t.Errorf("digest = %s", r.call.digest)
				}
			} else {
				if r.call != nil {
					t.Fatalf("unexpected call %+v", r.call)
				}
				if r.text != tc.text {
					t.Errorf("text = %q, want %q", r.text, tc.text)
				}
			}
			if tc.wantDirs != (directives{}) && r.directives != tc.wantDirs {
				t.Errorf("directives = %+v, want %+v", r.directives, tc.wantDirs)
			}
		})
	}
}

func TestParseDirectivesLinear(t *testing.T) {
	// A text of brackets with a closing pair at the very end must not take
	// quadratic time.
	s := strings.Repeat("[", 1<<20) + "]]"
	start := time.Now()
	clean, d := parseDirectives(s)
	if time.Since(start) > 2*time.Second || clean != s || d != (directives{cut: -1, words: -1}) {
		t.Errorf("took %v, directives %+v", time.Since(start), d)
	}
}
