package reliability

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// idAlphabet is Crockford's base32 in lowercase. Its characters are in
// ASCII order, so the text of an id sorts exactly as its 128 bits do.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idLen is the length of an id after its prefix: 128 bits in 5-bit digits.
const idLen = 26

// idState is the last id made in this process. Ids made in the same
// millisecond (or after the wall clock stepped back) reuse its timestamp and
// count its random part up, which is what keeps them in creation order.
var idState struct {
	mu  sync.Mutex
	ms  uint64
	rnd [10]byte
}

// NewID returns a new time-ordered id: prefix followed by 26 lowercase
// base32 characters holding a 48-bit unix-millisecond timestamp and 80
// random bits from crypto/rand. Within the process, an id made later always
// sorts after one made earlier with the same prefix, so ids work as bbolt
// keys in creation order. prefix includes its separator, e.g. "op_".
func NewID(prefix string) string {
	var raw [16]byte
	idState.mu.Lock()
	now := uint64(time.Now().UnixMilli())
	if now > idState.ms {
		idState.ms = now
		// crypto/rand.Read never fails: the runtime aborts the process first.
		_, _ = rand.Read(idState.rnd[:])
	} else if !increment(idState.rnd[:]) {
		// 2^80 ids in one millisecond overflowed the random part: borrow
		// the next millisecond rather than give up the order.
		idState.ms++
		_, _ = rand.Read(idState.rnd[:])
	}
	binary.BigEndian.PutUint16(raw[0:2], uint16(idState.ms>>32))
	binary.BigEndian.PutUint32(raw[2:6], uint32(idState.ms))
	copy(raw[6:], idState.rnd[:])
	idState.mu.Unlock()

	var out [idLen]byte
	hi := binary.BigEndian.Uint64(raw[:8])
	lo := binary.BigEndian.Uint64(raw[8:])
	for i := idLen - 1; i >= 0; i-- {
		out[i] = idAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return prefix + string(out[:])
}

// increment adds one to the big-endian number b and reports whether it did
// so without overflowing.
func increment(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return true
		}
	}
	return false
}
