package reliability

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBackupIsAConsistentStore backs up a store with a call still queued
// for the writer and opens the copy as a store of its own: the copy has the
// org and the call, and its size is the one announced.
func TestBackupIsAConsistentStore(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenBolt(filepath.Join(dir, "gateway.db"), BoltOptions{BatchDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	org, err := s.EnsureOrg("acme")
	if err != nil {
		t.Fatal(err)
	}
	call := &Call{ID: "chatcmpl-backup1", Object: "call", OrgID: org.ID, Model: "demo/demo-chat", ModelVersion: "demo-chat",
		RequestPayload: []byte(`{}`), ResponsePayload: []byte(`{}`), CreatedAt: time.Now().UTC()}
	s.RecordCall(call)

	var buf bytes.Buffer
	var announced int64 = -1
	n, err := s.Backup(func(size int64) io.Writer {
		announced = size
		return &buf
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != announced || int64(buf.Len()) != n {
		t.Fatalf("announced %d bytes, wrote %d, buffer holds %d", announced, n, buf.Len())
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := OpenBolt(copyPath, BoltOptions{})
	if err != nil {
		t.Fatalf("the copy is not a store: %v", err)
	}
	defer c.Close()
	if _, err := c.Org(org.ID); err != nil {
		t.Fatalf("the copy lacks the org: %v", err)
	}
	got, err := c.Call(call.ID)
	if err != nil {
		t.Fatalf("the copy lacks the queued call: %v", err)
	}
	if got.Model != call.Model {
		t.Fatalf("call model %q in the copy", got.Model)
	}
}
