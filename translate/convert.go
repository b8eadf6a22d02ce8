package translate

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// translateRequest converts a request between two different dialects: the
// client's shape is read into a conversation and written in the upstream's.
// Only fields with a meaning in both dialects are carried, so gateway-only
// fields (tier, tier_strict, forbid_atlas_network, quantization,
// metadata.operation_id) never reach the upstream.
func translateRequest(client, upstream Dialect, body []byte, upstreamModel string, stream bool) ([]byte, error) {
	if !gjson.ValidBytes(body) {
		return nil, invalid("", "the request body is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	var c *conversation
	var err error
	switch client {
	case Chat:
		c, err = chatConversation(root)
	case Messages:
		c, err = messagesConversation(root)
	case Responses:
		c, err = responsesConversation(root)
	default:
		return nil, fmt.Errorf("no translation from %s requests", client)
	}
	if err != nil {
		return nil, err
	}
	dst := make([]byte, 0, len(body)+len(body)/4+128)
	switch upstream {
	case Chat:
		return appendChatRequest(dst, c, upstreamModel, stream), nil
	case Messages:
		return appendMessagesRequest(dst, c, upstreamModel, stream), nil
	case Responses:
		return appendResponsesRequest(dst, c, upstreamModel, stream), nil
	}
	return nil, fmt.Errorf("no translation to %s upstreams", upstream)
}

// ConvertResponse converts a non-stream upstream response body (dialect
// upstream) into the client's dialect, and returns the usage and result read
// from it. When upstream == client, it returns the body as is.
func ConvertResponse(upstream, client Dialect, body []byte) ([]byte, Usage, Result, error) {
	if upstream == client {
		if client == Chat {
			u, r := ReadChatResponse(body)
			return body, u, r, nil
		}
		rep, err := readReply(upstream, body)
		if err != nil {
			// A body the reader does not recognise is still in the client's
			// own shape: it is passed on, with no usage to report.
			return body, Usage{}, Result{}, nil
		}
		return body, rep.usage.usage(), rep.result(), nil
	}
	rep, err := readReply(upstream, body)
	if err != nil {
		return nil, Usage{}, Result{}, err
	}
	dst, err := appendReply(make([]byte, 0, len(body)+256), client, &rep)
	if err != nil {
		return nil, Usage{}, Result{}, err
	}
	return dst, rep.usage.usage(), rep.result(), nil
}

// appendReply appends r in the client's dialect.
func appendReply(dst []byte, client Dialect, r *reply) ([]byte, error) {
	switch client {
	case Chat:
		return appendChatReply(dst, r), nil
	case Messages:
		return appendMessagesReply(dst, r), nil
	case Responses:
		return appendResponsesReply(dst, r), nil
	}
	return nil, fmt.Errorf("no conversion to %s responses", client)
}

// readReply reads a non-stream response body of the given dialect.
func readReply(d Dialect, body []byte) (reply, error) {
	if !gjson.ValidBytes(body) {
		return reply{}, errors.New("upstream response is not valid JSON")
	}
	root := gjson.ParseBytes(body)
	switch d {
	case Chat:
		return readChatReply(root)
	case Messages:
		return readMessagesReply(root)
	case Responses:
		return readResponsesReply(root)
	}
	return reply{}, fmt.Errorf("no conversion from %s responses", d)
}

// FinishResponse gives a client-shape body the gateway's id and the
// client-facing model id, and attaches delivery (raw JSON object, or nil for
// none) as a top-level "delivery" member, on every shape. An embeddings list
// has no id of its own and gets none.
func FinishResponse(client Dialect, body []byte, id, model string, delivery []byte) []byte {
	switch client {
	case Chat:
		return FinishChatResponse(body, id, model, delivery)
	case Embeddings:
		body = setString(body, "model", model)
	default:
		body = setStrings(body, "id", id, "model", model)
	}
	if delivery != nil {
		body = setRaw(body, "delivery", delivery)
	}
	return body
}

// NewTranscoder returns the Transcoder from an upstream dialect's stream to
// the client's, or nil when they are the same dialect (or either has no
// stream).
func NewTranscoder(upstream, client Dialect) Transcoder {
	if upstream == client {
		return nil
	}
	var p streamParser
	switch upstream {
	case Chat:
		p = &chatStreamParser{}
	case Messages:
		p = &messagesStreamParser{}
	case Responses:
		p = &responsesStreamParser{}
	default:
		return nil
	}
	var w streamWriter
	switch client {
	case Chat:
		w = &chatStreamWriter{}
	case Messages:
		w = &messagesStreamWriter{}
	case Responses:
		w = &responsesStreamWriter{}
	default:
		return nil
	}
	return &transcoder{parser: p, writer: w}
}

// NewClientStream returns the ClientStream for the client's dialect, or nil
// for a dialect that does not stream. includeUsage is what a chat client
// asked for in stream_options; the other shapes always report usage.
func NewClientStream(client Dialect, id, model string, includeUsage bool) ClientStream {
	switch client {
	case Chat:
		return NewChatStream(id, model, includeUsage)
	case Messages:
		return NewMessagesStream(id, model)
	case Responses:
		return NewResponsesStream(id, model)
	}
	return nil
}
