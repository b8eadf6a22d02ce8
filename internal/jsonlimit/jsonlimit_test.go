package jsonlimit

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		text string
		l    Limits
		want Violation
	}{
		{`{"a":[1,2,3]}`, Limits{MaxDepth: 2, MaxMembers: 4}, OK},
		{`{"a":[1,2,3]}`, Limits{MaxDepth: 1}, TooDeep},
		{`{"a":[1,2,3]}`, Limits{MaxMembers: 3}, TooManyMembers},
		{`[]`, Limits{MaxMembers: 0, MaxDepth: 1}, OK},
		{`[ ]`, Limits{MaxMembers: 1}, OK},
		{`[{}]`, Limits{MaxMembers: 1}, OK},
		{`"[[[[[,,,,"`, Limits{MaxDepth: 1, MaxMembers: 1}, OK},
		{`{"k\"[[[":"\\",",":[[1]]}`, Limits{MaxDepth: 3, MaxMembers: 4}, OK},
		{`{"k\"[[[":"\\",",":[[1]]}`, Limits{MaxMembers: 3}, TooManyMembers},
		{`{"k\"[[[":"\\",",":[[1]]}`, Limits{MaxDepth: 2}, TooDeep},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), Limits{MaxDepth: 99}, TooDeep},
		{"[" + strings.Repeat("1,", 1000) + "1]", Limits{MaxMembers: 1000}, TooManyMembers},
		{"[" + strings.Repeat("1,", 999) + "1]", Limits{MaxMembers: 1000}, OK},
		{`{"a":"unterminated`, Limits{MaxDepth: 1}, OK},
	} {
		if got := Check([]byte(tc.text), tc.l); got != tc.want {
			t.Errorf("Check(%.40q, %+v) = %d, want %d", tc.text, tc.l, got, tc.want)
		}
	}
}
