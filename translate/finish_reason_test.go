package translate

import "testing"

func TestFinishReasons(t *testing.T) {
	for stop, finish := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
		"model_context_window_exceeded": "length", "tool_use": "tool_calls", "refusal": "content_filter", "": "",
	} {
		if got := chatFinishFromAnthropic(stop); got != finish {
			t.Errorf("%q -> %q, want %q", stop, got, finish)
		}
	}
	for finish, stop := range map[string]string{
		"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use", "content_filter": "end_turn", "": "end_turn",
	} {
		if got := anthropicStopFromChat(finish); got != stop {
			t.Errorf("%q -> %q, want %q", finish, got, stop)
		}
	}
	for _, c := range []struct {
		status, reason string
		calls          bool
		want           string
	}{
		{"completed", "", false, "stop"}, {"completed", "", true, "tool_calls"},
		{"incomplete", "max_output_tokens", false, "length"}, {"incomplete", "content_filter", false, "content_filter"},
		{"failed", "", false, "stop"}, {"in_progress", "", false, ""},
	} {
		if got := chatFinishFromResponses(c.status, c.reason, c.calls); got != c.want {
			t.Errorf("%+v -> %q", c, got)
		}
	}
	for finish, want := range map[string][2]string{
		"stop": {"completed", ""}, "tool_calls": {"completed", ""}, "length": {"incomplete", "max_output_tokens"}, "content_filter": {"incomplete", "content_filter"},
	} {
		if s, r := responsesStatusFromChat(finish); s != want[0] || r != want[1] {
			t.Errorf("%q -> %q %q", finish, s, r)
		}
	}
}
