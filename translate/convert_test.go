package translate

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

var completionDialects = []Dialect{Chat, Messages, Responses}

var agentFixtures = map[Dialect]string{
	Chat:      "chat_request_agent.json",
	Messages:  "messages_request_agent.json",
	Responses: "responses_request_agent.json",
}

func TestTranslateRequestEveryPair(t *testing.T) {
	for _, client := range completionDialects {
		for _, upstream := range completionDialects {
			if client == upstream {
				continue
			}
			for _, stream := range []bool{false, true} {
				out, err := PrepareRequest(client, upstream, convFixture(t, agentFixtures[client]), "provider-model", stream)
				if err != nil {
					t.Fatalf("%s -> %s: %v", client, upstream, err)
				}
				if !gjson.ValidBytes(out) {
					t.Fatalf("%s -> %s: invalid JSON", client, upstream)
				}
				convWant(t, out, "model", "provider-model")
				convAbsent(t, out, gatewayOnly...)
				if stream {
					convWant(t, out, "stream", "true")
				} else {
					convAbsent(t, out, "stream")
				}
				if upstream == Chat && stream {
					convWant(t, out, "stream_options.include_usage", "true")
				} else {
					convAbsent(t, out, "stream_options")
				}
			}
		}
	}
}

func TestTranslateRequestRejects(t *testing.T) {
	_, err := translateRequest(Chat, Messages, []byte(`{"messages":[`), "m", false)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("invalid JSON: %v", err)
	}
	if _, err := translateRequest(Embeddings, Chat, []byte(`{"input":"x"}`), "m", false); err == nil {
		t.Error("embeddings request translated to chat")
	}
	if _, err := translateRequest(Chat, Embeddings, convFixture(t, "chat_request_agent.json"), "m", false); err == nil {
		t.Error("chat request translated to embeddings")
	}
}

// flatTurn is a turn reduced to what every dialect can carry, to compare
// conversations across a round trip.
type flatTurn struct {
	role  convRole
	parts []string
}

func flatten(t *testing.T, c *conversation) (string, []flatTurn, []string, toolChoiceMode, string) {
	t.Helper()
	var turns []flatTurn
	for _, turn := range c.turns {
		ft := flatTurn{role: turn.role}
		for i := range turn.parts {
			ft.parts = append(ft.parts, flatPart(&turn.parts[i]))
		}
		turns = append(turns, ft)
	}
	var tools []string
	for _, tool := range c.tools {
		tools = append(tools, tool.name+"|"+tool.description+"|"+compactJSON(tool.schema.Raw))
	}
	return c.systemText(), turns, tools, c.choice, c.choiceName
}

func flatPart(p *convPart) string {
	switch p.kind {
	case partText:
		return "text:" + p.text
	case partImage:
		return "image:" + string(appendImageURL(nil, p))
	case partToolCall:
		return "call:" + p.id + "|" + p.name + "|" + compactJSON(p.text)
	}
	var content []string
	for i := range p.content {
		content = append(content, flatPart(&p.content[i]))
	}
	return "result:" + p.id + "|" + strings.Join(content, ",")
}

func conversationOf(t *testing.T, d Dialect, body []byte) *conversation {
	t.Helper()
	root := gjson.ParseBytes(body)
	var c *conversation
	var err error
	switch d {
	case Chat:
		c, err = chatConversation(root)
	case Messages:
		c, err = messagesConversation(root)
	default:
		c, err = responsesConversation(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRequestRoundTrips sends each agent conversation to each other dialect
// and back: system prompt, messages, images, tools, tool choice, tool calls
// and results survive.
func TestRequestRoundTrips(t *testing.T) {
	for _, client := range completionDialects {
		for _, via := range completionDialects {
			if via == client {
				continue
			}
			t.Run(client.String()+"->"+via.String()+"->"+client.String(), func(t *testing.T) {
				orig := convFixture(t, agentFixtures[client])
				there, err := translateRequest(client, via, orig, "m", false)
				if err != nil {
					t.Fatal(err)
				}
				back, err := translateRequest(via, client, there, "m", false)
				if err != nil {
					t.Fatal(err)
				}
				s1, turns1, tools1, choice1, name1 := flatten(t, conversationOf(t, client, orig))
				s2, turns2, tools2, choice2, name2 := flatten(t, conversationOf(t, client, back))
				if s1 != s2 {
					t.Errorf("system %q\nbecame %q", s1, s2)
				}
				if !reflect.DeepEqual(turns1, turns2) {
					t.Errorf("turns %v\nbecame %v", turns1, turns2)
				}
				if !reflect.DeepEqual(tools1, tools2) || choice1 != choice2 || name1 != name2 {
					t.Errorf("tools %v %d %q\nbecame %v %d %q", tools1, choice1, name1, tools2, choice2, name2)
				}
			})
		}
	}
}

func TestConvertResponseSameDialect(t *testing.T) {
	for d, name := range map[Dialect]string{
		Chat:      "chat_response_tool.json",
		Messages:  "messages_response_tools.json",
		Responses: "responses_response_tool.json",
	} {
		body := convFixture(t, name)
		out, u, r, err := ConvertResponse(d, d, body)
		if err != nil || !bytes.Equal(out, body) {
			t.Errorf("%s: body changed or error %v", d, err)
		}
		if !u.Known || u.InputTokens == 0 || len(r.ToolCalls) != 1 || r.FinishReason != "tool_calls" {
			t.Errorf("%s: usage %+v result %+v", d, u, r)
		}
	}
}

func TestConvertResponseRejects(t *testing.T) {
	if _, _, _, err := ConvertResponse(Messages, Chat, []byte(`{"type":"error","error":{"type":"api_error","message":"Overloaded"}}`)); err == nil {
		t.Error("an error body converted")
	}
	if _, _, _, err := ConvertResponse(Chat, Responses, []byte(`{"id":`)); err == nil {
		t.Error("invalid JSON converted")
	}
	if _, _, _, err := ConvertResponse(Chat, Embeddings, convFixture(t, "chat_response_text.json")); err == nil {
		t.Error("chat response converted to embeddings")
	}
}

func TestFinishResponse(t *testing.T) {
	delivery := []byte(`{"tier":"standard","served_by":"provider"}`)
	for _, c := range []struct {
		client Dialect
		name   string
	}{
		{Chat, "chat_response_text.json"},
		{Messages, "messages_response_text.json"},
		{Responses, "responses_response_text.json"},
	} {
		out := FinishResponse(c.client, convFixture(t, c.name), "gw_42", "router-1", delivery)
		convWant(t, out, "id", "gw_42")
		convWant(t, out, "model", "router-1")
		convWant(t, out, "delivery", string(delivery))
		out = FinishResponse(c.client, convFixture(t, c.name), "gw_43", "router-1", nil)
		convAbsent(t, out, "delivery")
	}
	out := FinishResponse(Embeddings, []byte(`{"object":"list","data":[],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`), "gw_44", "router-embed-1", delivery)
	convAbsent(t, out, "id")
	convWant(t, out, "model", "router-embed-1")
	convWant(t, out, "delivery.served_by", "provider")
}

func TestNewTranscoderAndClientStream(t *testing.T) {
	for _, up := range append(completionDialects, Embeddings) {
		for _, cl := range append(completionDialects, Embeddings) {
			tc := NewTranscoder(up, cl)
			want := up != cl && up != Embeddings && cl != Embeddings
			if (tc != nil) != want {
				t.Errorf("NewTranscoder(%s, %s) = %v", up, cl, tc)
			}
		}
	}
	if _, ok := NewClientStream(Chat, "i", "m", true).(*ChatStream); !ok {
		t.Error("chat client stream")
	}
	if _, ok := NewClientStream(Messages, "i", "m", true).(*MessagesStream); !ok {
		t.Error("messages client stream")
	}
	if _, ok := NewClientStream(Responses, "i", "m", true).(*ResponsesStream); !ok {
		t.Error("responses client stream")
	}
	if NewClientStream(Embeddings, "i", "m", true) != nil {
		t.Error("embeddings client stream")
	}
}

// TestAnswerFinishEqualsConvertThenFinish: finishing a read answer with
// the gateway's id, model and delivery gives the very bytes of converting
// the body and then finishing it, for every pair of dialects.
func TestAnswerFinishEqualsConvertThenFinish(t *testing.T) {
	fixtures := map[Dialect][]string{
		Chat:      {"chat_response_text.json", "chat_response_tool.json"},
		Messages:  {"messages_response_text.json", "messages_response_tools.json"},
		Responses: {"responses_response_text.json", "responses_response_tool.json"},
	}
	ids := map[Dialect]string{Chat: "chatcmpl-01gw", Messages: "msg_01gw", Responses: "resp_01gw"}
	delivery := []byte(`{"tier":"standard","cost_usd":0.1}`)
	for upstream, names := range fixtures {
		for _, name := range names {
			for client := range ids {
				body := convFixture(t, name)
				conv, u, res, err := ConvertResponse(upstream, client, body)
				if err != nil {
					t.Fatal(err)
				}
				want := FinishResponse(client, conv, ids[client], "router-1", delivery)
				ans, err := ReadAnswer(upstream, client, body)
				if err != nil {
					t.Fatal(err)
				}
				if ans.Usage() != u || !reflect.DeepEqual(*ans.Result(), res) || ans.Model() != gjson.GetBytes(body, "model").String() {
					t.Fatalf("%s -> %s: usage %+v result %+v model %q, want %+v %+v", name, client, ans.Usage(), ans.Result(), ans.Model(), u, res)
				}
				got, err := ans.Finish(ids[client], "router-1", delivery)
				if err != nil {
					t.Fatal(err)
				}
				if client == Responses && upstream != Responses {
					// Output items take their ids from the response id:
					// the gateway's here, the upstream's when converted
					// before the id is set. Both are unique to the call.
					for i := range gjson.GetBytes(got, "output").Array() {
						if !strings.Contains(gjson.GetBytes(got, fmt.Sprintf("output.%d.id", i)).String(), "_01gw_") {
							t.Fatalf("%s -> %s: item id not from the gateway's: %s", name, client, got)
						}
						got, _ = sjson.DeleteBytes(got, fmt.Sprintf("output.%d.id", i))
						want, _ = sjson.DeleteBytes(want, fmt.Sprintf("output.%d.id", i))
					}
				}
				if string(got) != string(want) {
					t.Fatalf("%s -> %s:\n got %s\nwant %s", name, client, got, want)
				}
				if gjson.GetBytes(got, "id").String() != ids[client] {
					t.Fatalf("%s -> %s: id %s", name, client, gjson.GetBytes(got, "id"))
				}
			}
		}
	}
	for _, pair := range [][2]Dialect{{Chat, Chat}, {Messages, Chat}, {Messages, Messages}, {Chat, Embeddings}} {
		if _, err := ReadAnswer(pair[0], pair[1], []byte(`{"type":"message",`)); err == nil {
			t.Fatalf("ReadAnswer %s -> %s accepted a cut body", pair[0], pair[1])
		}
	}
}
