package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ReadChatResponse extracts the usage and the assistant result from a
// chat.completion body.
func ReadChatResponse(body []byte) (Usage, Result) {
	a := readChatAnswer(body)
	return a.usage, a.result
}

// chatAnswer is what one pass over a chat.completion body finds: the usage,
// the first choice's result, and the top-level members finishChatAnswer
// rewrites, with their offsets in the body.
type chatAnswer struct {
	usage               Usage
	result              Result
	id, model, delivery gjson.Result
}

// readChatAnswer reads a chat.completion body, known to be valid JSON, in
// one pass over its top-level members. Where a key repeats, the first
// counts, as in a gjson lookup. The body is read in place: the reply's
// strings share its bytes, so it must not change while they are in use.
func readChatAnswer(body []byte) chatAnswer {
	var rep chatAnswer
	var usage, choices gjson.Result
	gjson.Parse(bodyString(body)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			setOnce(&rep.id, v)
		case "model":
			setOnce(&rep.model, v)
		case "delivery":
			setOnce(&rep.delivery, v)
		case "usage":
			setOnce(&usage, v)
		case "choices":
			setOnce(&choices, v)
		}
		return true
	})
	if usage.IsObject() {
		var in, out, details gjson.Result
		usage.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "prompt_tokens":
				setOnce(&in, v)
			case "completion_tokens":
				setOnce(&out, v)
			case "prompt_tokens_details":
				setOnce(&details, v)
			}
			return true
		})
		rep.usage = Usage{InputTokens: int(in.Int()), OutputTokens: int(out.Int()), Known: in.Exists() || out.Exists()}
		if details.IsObject() {
			rep.usage.CacheReadTokens = int(details.Get("cached_tokens").Int())
		}
	}
	choice := choices.Get("0")
	rep.result.FinishReason = choice.Get("finish_reason").String()
	msg := choice.Get("message")
	rep.result.Text = msg.Get("content").String()
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		rep.result.ToolCalls = append(rep.result.ToolCalls, ToolCall{
			ID:        tc.Get("id").String(),
			Name:      tc.Get("function.name").String(),
			Arguments: tc.Get("function.arguments").String(),
		})
		return true
	})
	return rep
}

// FinishChatResponse gives a chat.completion body the gateway's completion id
// and client-facing model id, and attaches the delivery block (raw JSON, or
// nil for none).
func FinishChatResponse(body []byte, id, model string, delivery []byte) []byte {
	fields := gjson.GetManyBytes(body, "id", "model", "delivery")
	rep := chatAnswer{id: fields[0], model: fields[1], delivery: fields[2]}
	return finishChatAnswer(body, &rep, id, model, delivery)
}

// finishChatAnswer is FinishChatResponse for a body rep was read from,
// which spares it a second search for the members it rewrites.
func finishChatAnswer(body []byte, rep *chatAnswer, id, model string, delivery []byte) []byte {
	// Sized for the delivery member too, so adding it copies nothing.
	out := appendWithIDModel(make([]byte, 0, len(body)+len(id)+len(model)+len(delivery)+24), body, rep.id, id, rep.model, model)
	if delivery == nil {
		return out
	}
	return insertMember(out, "delivery", delivery, rep.delivery.Exists())
}

// setString sets a top-level string field, keeping the body unchanged when it
// is not a JSON object.
func setString(body []byte, path, value string) []byte {
	out, err := sjson.SetBytes(body, path, value)
	if err != nil {
		return body
	}
	return out
}

// AppendChatCompletion appends the chat.completion object that a result
// amounts to: how the gateway records a streamed answer.
func AppendChatCompletion(dst []byte, id, model string, created int64, u Usage, r *Result) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, id)
	dst = append(dst, `,"object":"chat.completion","created":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"model":`...)
	dst = AppendJSONString(dst, model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if r.Text == "" && len(r.ToolCalls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = AppendJSONString(dst, r.Text)
	}
	if len(r.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range r.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = AppendJSONString(dst, tc.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = AppendJSONString(dst, tc.Name)
			dst = append(dst, `,"arguments":`...)
			dst = AppendJSONString(dst, tc.Arguments)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `},"finish_reason":`...)
	if r.FinishReason == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendJSONString(dst, r.FinishReason)
	}
	dst = append(dst, "}]"...)
	if u.Known {
		dst = append(dst, `,"usage":{"prompt_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
		dst = append(dst, `,"completion_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
		dst = append(dst, `,"total_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.InputTokens+u.OutputTokens), 10)
		if u.CacheReadTokens > 0 {
			dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
			dst = strconv.AppendInt(dst, int64(u.CacheReadTokens), 10)
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
