package translate

import (
	"errors"

	"github.com/tidwall/gjson"
)

// Answer is an upstream's non-stream answer read for a client: what the
// gateway learns from it (usage, result, the upstream's model) and, once
// the delivery block has been built from that, the body in the client's
// shape. Every pair of dialects is read once:
//   - a chat answer for a chat client, the commonest call, in one pass
//     whose offsets then serve the rewrite of id and model;
//   - an answer in another dialect into the neutral form, written once in
//     the client's with the gateway's id, model and delivery;
//   - any other answer in the client's own dialect as it came, with its
//     id, model and delivery set.
type Answer struct {
	client Dialect
	body   []byte
	// Exactly one of chat and neutral is used, by kind.
	kind    answerKind
	chat    chatAnswer
	neutral reply
	usage   Usage
	result  Result
	model   string
}

type answerKind uint8

const (
	answerOwn   answerKind = iota // the client's own dialect, passed on
	answerChat                    // chat for chat
	answerCross                   // another dialect, converted
)

// ReadAnswer reads a non-stream body of the upstream's dialect for a client
// of the client's. An error means the body is not an answer the gateway
// can pass on. The body is read in place: it must not change while the
// Answer is in use.
func ReadAnswer(upstream, client Dialect, body []byte) (*Answer, error) {
	a := &Answer{client: client, body: body}
	switch {
	case upstream == Chat && client == Chat:
		if !gjson.ValidBytes(body) {
			return nil, errors.New("upstream response is not valid JSON")
		}
		a.kind, a.chat = answerChat, readChatAnswer(body)
		a.usage, a.result, a.model = a.chat.usage, a.chat.result, a.chat.model.String()
	case upstream != client && client != Embeddings:
		r, err := readReply(upstream, body)
		if err != nil {
			return nil, err
		}
		a.kind, a.neutral = answerCross, r
		a.usage, a.result, a.model = r.usage.usage(), r.result(), r.model
	default:
		if !gjson.ValidBytes(body) {
			return nil, errors.New("upstream response is not valid JSON")
		}
		if client == Embeddings {
			a.usage = ReadEmbeddingsUsage(body)
		} else if r, err := readReply(client, body); err == nil {
			// A body the reader does not recognise is still in the
			// client's own shape: it is passed on, with no usage.
			a.usage, a.result = r.usage.usage(), r.result()
		}
		a.model = gjson.GetBytes(body, "model").String()
	}
	return a, nil
}

// Usage is the token usage the upstream reported.
func (a *Answer) Usage() Usage { return a.usage }

// Result is the assistant's output.
func (a *Answer) Result() *Result { return &a.result }

// Model is the upstream's model: the version that served the call.
func (a *Answer) Model() string { return a.model }

// Finish returns the answer in the client's shape with the gateway's id and
// client-facing model, and delivery (raw JSON, or nil for none) as its last
// member. id must carry the client dialect's prefix (chatcmpl-, msg_,
// resp_), as the gateway's ids do: converted answers keep an id's unique
// part under that prefix.
func (a *Answer) Finish(id, model string, delivery []byte) ([]byte, error) {
	switch a.kind {
	case answerChat:
		return finishChatAnswer(a.body, &a.chat, id, model, delivery), nil
	case answerCross:
		w := a.neutral
		w.id, w.model = id, model
		dst, err := appendReply(make([]byte, 0, 512+len(delivery)+w.size()), a.client, &w)
		if err != nil {
			return nil, err
		}
		if delivery != nil {
			dst = insertMember(dst, "delivery", delivery, false)
		}
		return dst, nil
	}
	return FinishResponse(a.client, a.body, id, model, delivery), nil
}
