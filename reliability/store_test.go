package reliability

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestPageQueryLimit(t *testing.T) {
	tests := []struct {
		limit, want int
		err         error
	}{
		{0, DefaultPageLimit, nil},
		{1, 1, nil},
		{200, 200, nil},
		{201, 0, ErrBadLimit},
		{-1, 0, ErrBadLimit},
	}
	for _, tt := range tests {
		got, err := PageQuery{Limit: tt.limit}.limit()
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("limit %d: got %d, %v; want %d, %v", tt.limit, got, err, tt.want, tt.err)
		}
	}
}

func TestEmptyPageJSON(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	page, err := s.ListCalls("org_nobody", CallQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"object":"list","data":[],"has_more":false,"next_cursor":null}`
	if string(got) != want {
		t.Fatalf("empty page = %s, want %s", got, want)
	}
}
