package reliability

import (
	"errors"
	"testing"
)

func TestBlobs(t *testing.T) {
	s, _ := openTestStore(t, BoltOptions{})
	if _, err := s.Blob("evidence"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing blob: %v", err)
	}
	if err := s.SaveBlob("evidence", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveBlob("evidence", []byte(`{"v":2}`)); err != nil {
		t.Fatal(err)
	}
	b, err := s.Blob("evidence")
	if err != nil || string(b) != `{"v":2}` {
		t.Fatalf("%s %v", b, err)
	}
}
