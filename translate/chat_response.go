package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ReadChatResponse extracts the usage and the assistant result from a
// chat.completion body.
func ReadChatResponse(body []byte) (Usage, Result) {
	var u Usage
	var r Result
	root := gjson.ParseBytes(body)
	if usage := root.Get("usage"); usage.IsObject() {
		u = Usage{
			InputTokens:  int(usage.Get("prompt_tokens").Int()),
			OutputTokens: int(usage.Get("completion_tokens").Int()),
			Known:        usage.Get("prompt_tokens").Exists() || usage.Get("completion_tokens").Exists(),
		}
	}
	choice := root.Get("choices.0")
	r.FinishReason = choice.Get("finish_reason").String()
	msg := choice.Get("message")
	r.Text = msg.Get("content").String()
	msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		r.ToolCalls = append(r.ToolCalls, ToolCall{
			ID:        tc.Get("id").String(),
			Name:      tc.Get("function.name").String(),
			Arguments: tc.Get("function.arguments").String(),
		})
		return true
	})
	return u, r
}

// FinishChatResponse gives a chat.completion body the gateway's completion id
// and client-facing model id, and attaches the delivery block (raw JSON, or
// nil for none).
func FinishChatResponse(body []byte, id, model string, delivery []byte) []byte {
	fields := gjson.GetManyBytes(body, "id", "model", "delivery")
	// Sized for the delivery member too, so adding it copies nothing.
	out := appendWithIDModel(make([]byte, 0, len(body)+len(id)+len(model)+len(delivery)+24), body, fields[0], id, fields[1], model)
	if delivery == nil {
		return out
	}
	return insertMember(out, "delivery", delivery, fields[2].Exists())
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
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
