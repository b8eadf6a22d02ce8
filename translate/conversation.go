package translate

import (
	"strings"

	"github.com/tidwall/gjson"
)

// A conversation is a completion request in no particular dialect. The reader
// of each client shape produces one and the writer of each upstream shape
// consumes it, so every pair of dialects follows the same mapping rules and
// each dialect's quirks live in exactly one reader and one writer.
//
// Strings and gjson values alias the parsed request body; a conversation lives
// only as long as one translation.
type conversation struct {
	// system holds the system prompt pieces in order (chat system and
	// developer messages, the messages-shape system, responses instructions).
	system []string
	// turns alternate between user and assistant: add merges consecutive
	// parts of the same role into one turn.
	turns []convTurn
	tools []convTool

	choice     toolChoiceMode
	choiceName string
	// parallel is whether the model may call several tools in one turn.
	parallel convSwitch

	maxTokens   int64
	temperature gjson.Result
	topP        gjson.Result
	topK        gjson.Result
	stop        []string
	user        string
	// metadata is a string map the OpenAI shapes share; operation_id is
	// skipped when it is written.
	metadata gjson.Result
	// store is whether an OpenAI upstream may keep the exchange.
	store  convSwitch
	effort string
	format convFormat
}

// convSwitch is a switch the client may leave unset, so that the upstream's
// own default applies.
type convSwitch uint8

const (
	switchUnset convSwitch = iota
	switchOff
	switchOn
)

// switchOf reads a JSON true or false; anything else leaves it unset.
func switchOf(v gjson.Result) convSwitch {
	switch v.Type {
	case gjson.True:
		return switchOn
	case gjson.False:
		return switchOff
	}
	return switchUnset
}

type convRole uint8

const (
	roleUser convRole = iota + 1
	roleAssistant
)

type convTurn struct {
	role  convRole
	parts []convPart
}

type convPartKind uint8

const (
	partText convPartKind = iota + 1
	partImage
	partToolCall
	partToolResult
)

// convPart is one piece of a turn. Which fields are set depends on kind:
// text uses text; an image uses url, or mediaType and base64 data, and
// detail; a tool call uses id, name and text (the arguments JSON text); a
// tool result uses id, isError and content (text and image parts).
type convPart struct {
	kind      convPartKind
	text      string
	url       string
	mediaType string
	data      string
	detail    string
	id        string
	name      string
	isError   bool
	content   []convPart
}

// convTool is a function the model may call.
type convTool struct {
	name        string
	description string
	// schema is the JSON schema of the arguments object, or the zero Result.
	schema gjson.Result
	// strict is the client's strict flag (a JSON bool), or the zero Result.
	strict gjson.Result
}

type toolChoiceMode uint8

const (
	choiceUnset toolChoiceMode = iota
	choiceAuto
	choiceNone
	choiceRequired
	choiceTool
)

// convFormat is a structured-output request: type is "text", "json_object"
// or "json_schema" (with name, description, schema and strict).
type convFormat struct {
	typ         string
	name        string
	description string
	schema      gjson.Result
	strict      gjson.Result
}

// add appends a part to the conversation, merging it into the last turn when
// that turn has the same role.
func (c *conversation) add(role convRole, p convPart) {
	if n := len(c.turns); n > 0 && c.turns[n-1].role == role {
		c.turns[n-1].parts = append(c.turns[n-1].parts, p)
		return
	}
	c.turns = append(c.turns, convTurn{role: role, parts: []convPart{p}})
}

// systemText is the system prompt as one string: separate pieces are joined
// with a blank line, as they would read to the model.
func (c *conversation) systemText() string {
	switch len(c.system) {
	case 0:
		return ""
	case 1:
		return c.system[0]
	}
	return strings.Join(c.system, "\n\n")
}
