package reliability

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	bolt "go.etcd.io/bbolt"

	"github.com/modelgate/gateway/translate"
)

// Payload retention. A call's request and response payloads are most of
// what the store holds, so three rules bound them:
//
//   - A payload is kept whole up to Retention.MaxPayloadBytes. A larger one
//     is replaced, when the call is written, by a marker object holding the
//     original size and the payload's first bytes as text:
//     {"truncated":true,"original_bytes":N,"prefix":"..."}.
//   - PrunePayloads replaces the payloads of calls older than a cutoff by
//     {"pruned":true,"original_bytes":N}, a few hundred calls per
//     transaction, so that the call writer never waits long for the file.
//     Everything else about the call (tokens, cost, attempts, delivery)
//     is kept; bbolt reuses the freed pages, so the file stops growing
//     once the oldest payloads are pruned as fast as new ones arrive.
//   - Lists stop a page early once its records add up to MaxPageBytes
//     (see loadPage), so no page is larger than that plus one record.

// Defaults of Retention.
const (
	// DefaultMaxPayloadBytes is the largest payload kept whole.
	DefaultMaxPayloadBytes = 1 << 20
	// DefaultMaxPageBytes bounds the stored bytes of the records of one
	// list page.
	DefaultMaxPageBytes = 8 << 20
	// DefaultPruneBatch is how many calls one pruning transaction visits.
	DefaultPruneBatch = 256
)

// Retention sets what the store keeps of each call. A zero field takes its
// default.
type Retention struct {
	// MaxPayloadBytes is the largest request or response payload kept
	// whole; a negative value keeps every payload whole.
	MaxPayloadBytes int
}

// SetRetention sets the payload limit of calls recorded from now on.
func (s *BoltStore) SetRetention(r Retention) {
	s.retention.Store(&r)
}

// maxPayload is the payload limit in force: negative for none.
func (s *BoltStore) maxPayload() int {
	if r := s.retention.Load(); r != nil && r.MaxPayloadBytes != 0 {
		return r.MaxPayloadBytes
	}
	return DefaultMaxPayloadBytes
}

// limitPayloads returns c, or a copy of it whose payloads over limit bytes
// are truncated; c itself is never changed, as the caller may still use
// it (the eval pass scores the whole response). A zero limit is the
// default, a negative one none.
func limitPayloads(c *Call, limit int) *Call {
	if limit == 0 {
		limit = DefaultMaxPayloadBytes
	}
	if limit < 0 || (len(c.RequestPayload) <= limit && len(c.ResponsePayload) <= limit) {
		return c
	}
	cp := *c
	cp.RequestPayload = truncatePayload(c.RequestPayload, limit)
	cp.ResponsePayload = truncatePayload(c.ResponsePayload, limit)
	return &cp
}

// truncatedOverhead is room for the marker's own members.
const truncatedOverhead = 96

// truncatePayload returns raw when it is at most limit bytes, or else the
// truncation marker: the original size and as much of the payload's text,
// cut at a character boundary, as keeps the marker within limit bytes.
func truncatePayload(raw []byte, limit int) []byte {
	if len(raw) <= limit {
		return raw
	}
	out := make([]byte, 0, limit)
	out = append(out, `{"truncated":true,"original_bytes":`...)
	out = strconv.AppendInt(out, int64(len(raw)), 10)
	out = append(out, `,"prefix":`...)
	room := limit - len(out) - truncatedOverhead
	// Escaping can grow the text sixfold (control bytes as \u00XX): take
	// the longest prefix whose escaped form fits.
	n := min(len(raw), max(room, 0))
	for n > 0 {
		for n > 0 && !utf8.RuneStart(raw[n]) {
			n--
		}
		if escapedLen(raw[:n]) <= room {
			break
		}
		n = n * 3 / 4
	}
	out = translate.AppendJSONString(out, string(raw[:n]))
	return append(out, '}')
}

// escapedLen is the length of b as a JSON string's contents.
func escapedLen(b []byte) int {
	n := 0
	for _, c := range b {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		default:
			n++
		}
	}
	return n
}

// pruneMarkKey is where the meta bucket keeps, per org, the sort position
// of the last call PrunePayloads has visited.
func pruneMarkKey(orgID string) []byte {
	return append([]byte("prune_mark:"), orgID...)
}

// PrunePayloads replaces the payloads of calls created before cutoff by
// the pruned marker, visiting at most batch calls (default
// DefaultPruneBatch) per write transaction. It resumes where the previous
// run stopped for each org, so each call is visited once; stop, when
// closed, ends it between transactions. It returns how many calls it
// pruned.
func (s *BoltStore) PrunePayloads(cutoff time.Time, batch int, stop <-chan struct{}) (int, error) {
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	var orgs []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOrgs).ForEach(func(k, _ []byte) error {
			orgs = append(orgs, string(k))
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("prune payloads: list orgs: %w", err)
	}
	total := 0
	for _, org := range orgs {
		for {
			select {
			case <-stop:
				return total, nil
			default:
			}
			n, done, err := s.pruneStep(org, cutoff, batch)
			total += n
			if err != nil {
				return total, fmt.Errorf("prune payloads of org %s: %w", org, err)
			}
			if done {
				break
			}
		}
	}
	return total, nil
}

// pruneStep prunes the next batch of one org's calls older than cutoff in
// one transaction; done is true once none is left.
func (s *BoltStore) pruneStep(orgID string, cutoff time.Time, batch int) (pruned int, done bool, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		index, calls, meta := tx.Bucket(bucketCallsByOrg), tx.Bucket(bucketCalls), tx.Bucket(bucketMeta)
		prefix := indexPrefix(orgID)
		markKey := pruneMarkKey(orgID)
		mark := meta.Get(markKey)
		start := append(bytes.Clone(prefix), mark...)
		var end [sortTimeLen]byte
		binary.BigEndian.PutUint64(end[:], uint64(cutoff.UnixNano())^(1<<63))

		c := index.Cursor()
		k, v := c.Seek(start)
		if mark != nil && k != nil && bytes.Equal(k, start) {
			k, v = c.Next()
		}
		var last []byte
		visited := 0
		done = true
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			pos := k[len(prefix):]
			if len(pos) != sortTimeLen+len(v) || !bytes.Equal(pos[sortTimeLen:], v) {
				continue // an entry of a longer org id that shares the prefix
			}
			if bytes.Compare(pos[:sortTimeLen], end[:]) >= 0 {
				break
			}
			if visited == batch {
				done = false
				break
			}
			visited++
			last = pos
			id := bytes.Clone(v)
			rec := calls.Get(id)
			if rec == nil {
				continue
			}
			out, ok := prunedRecord(rec)
			if !ok {
				continue
			}
			// Deleted, then put back: bbolt merges the pages a delete
			// leaves underfilled, but never those a smaller value does,
			// so a plain put would keep every page the payloads took.
			if err := calls.Delete(id); err != nil {
				return fmt.Errorf("rewrite call %s: %w", id, err)
			}
			if err := calls.Put(id, out); err != nil {
				return fmt.Errorf("rewrite call %s: %w", id, err)
			}
			pruned++
		}
		if last == nil {
			return nil
		}
		return meta.Put(markKey, bytes.Clone(last))
	})
	return pruned, done, err
}

// prunedRecord returns the stored call rec with its payloads replaced by
// the pruned marker; false when there is nothing to prune.
func prunedRecord(rec []byte) ([]byte, bool) {
	out := rec
	changed := false
	for _, path := range [...]string{"request_payload", "response_payload"} {
		v := gjson.GetBytes(out, path)
		if !v.Exists() || v.Type == gjson.Null || v.Get("pruned").Bool() {
			continue
		}
		size := int64(len(v.Raw))
		if v.Get("truncated").Bool() {
			size = v.Get("original_bytes").Int()
		}
		marker := strconv.AppendInt([]byte(`{"pruned":true,"original_bytes":`), size, 10)
		marker = append(marker, '}')
		next, err := sjson.SetRawBytes(out, path, marker)
		if err != nil {
			continue
		}
		out, changed = next, true
	}
	return out, changed
}
