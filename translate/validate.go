package translate

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Request is what the gateway reads from a client request in one pass.
// Its strings never alias the request body, so the body may be edited or
// reused once it has been parsed.
type Request struct {
	// Dialect is the wire shape the client spoke: Chat, Messages, Responses
	// or Embeddings.
	Dialect Dialect
	// Model is the requested model id, either "<provider>/<model>" or a
	// router id.
	Model string
	// Stream is true when the client asked for an event stream.
	Stream bool
	// IncludeUsage is chat's stream_options.include_usage: the client wants
	// a final chunk that carries usage.
	IncludeUsage bool
	// Tier is "realtime", "standard" or "batch"; it is "" when the client
	// sent none, and the caller applies the default "standard".
	Tier string
	// TierStrict makes a call fail with tier_unavailable rather than be
	// upgraded to realtime.
	TierStrict bool
	// ForbidAtlasNetwork keeps the call off the partner consumer-GPU network.
	ForbidAtlasNetwork bool
	// OperationID is metadata.operation_id, "" when absent.
	OperationID string
	// User is the end-user id: `user` on chat and embeddings (and responses,
	// which reads it without validating it), metadata.user_id on messages.
	User string
	// Quantization is the embeddings quantization, "full", "q8" or "q4",
	// or "" when absent.
	Quantization string
	// Messages counts the conversation's messages (responses: its input
	// items, 1 for a string input); 0 for embeddings.
	Messages int
	// Tools counts the tools the request declares.
	Tools int
}

// maxDepth bounds how deeply arrays and objects may nest in a body. The JSON
// readers recurse once per level, and a body of a few megabytes of brackets
// would otherwise exhaust the goroutine stack, which no recover can catch.
const maxDepth = 512

// Enumerations of the contract. The validators return these strings rather
// than the body's, so a Request never points into the body.
var (
	tiers         = []string{"realtime", "standard", "batch"}
	imageDetails  = []string{"auto", "low", "high"}
	chatPartTypes = []string{"text", "image_url"}
)

// bodyString reads body as a string without copying it. Validation keeps no string
// from it past its return (Request fields are cloned or taken from the
// enumerations above), so the caller stays free to edit the body.
func bodyString(body []byte) string {
	return unsafe.String(unsafe.SliceData(body), len(body))
}

// parseBody checks that body is one JSON object of valid UTF-8 text and
// returns it parsed. The UTF-8 check is one utf8.Valid pass over the body;
// only a body that fails it is scanned again to name the string at fault.
func parseBody(body []byte) (gjson.Result, *ValidationError) {
	s := bodyString(body)
	if !nestedWithin(s, maxDepth) {
		return gjson.Result{}, invalid("", "request body nests arrays and objects more than %d levels deep", maxDepth)
	}
	if !gjson.Valid(s) {
		return gjson.Result{}, invalid("", "request body must be valid JSON")
	}
	root := gjson.Parse(s)
	if !root.IsObject() {
		return gjson.Result{}, invalid("", "request body must be a JSON object")
	}
	if !utf8.Valid(body) {
		return gjson.Result{}, invalidUTF8(body)
	}
	return root, nil
}

// invalidUTF8 is the violation of a body that is valid JSON but not valid
// UTF-8: gjson.Valid does not look inside strings, so the bad bytes are in
// one, and the violation names it.
func invalidUTF8(body []byte) *ValidationError {
	param, ok := InvalidUTF8Param(body)
	if !ok {
		return invalid("", "request body must be valid JSON")
	}
	if param == "" {
		return &ValidationError{Message: "request body must be valid UTF-8 text", Code: CodeInvalidUTF8}
	}
	return &ValidationError{Param: param, Message: "must be valid UTF-8 text", Code: CodeInvalidUTF8}
}

// nestedWithin reports whether no array or object in the JSON text s is
// nested more than limit levels deep. It only counts brackets outside
// strings; whether s is valid JSON is checked separately.
func nestedWithin(s string, limit int) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			// Jump from quote to quote; a quote preceded by an odd run of
			// backslashes is escaped and the string goes on.
			for {
				j := strings.IndexByte(s[i+1:], '"')
				if j < 0 {
					return true
				}
				i += 1 + j
				n := 0
				for n < i && s[i-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '[', '{':
			depth++
			if depth > limit {
				return false
			}
		case ']', '}':
			depth--
		}
	}
	return true
}

// keep stores member k: v of an object at dst, the place the gateway reads
// it from; dst is nil for the members it does not read, which pass through
// unvalidated. Callers walk an object with ForEach and keep each member, in
// one pass, with the walk written at the call site so that the fields stay on
// the stack. A read member that appears twice sets *dup and stops the walk:
// the gateway reads the first occurrence and an upstream parser may read the
// last, and the two must never see different requests.
func keep(dst *gjson.Result, k, v gjson.Result, dup **ValidationError) bool {
	if dst == nil {
		return true
	}
	if dst.Exists() {
		*dup = invalid(strings.Clone(k.Str), "must not appear more than once")
		return false
	}
	*dst = v
	return true
}

// eachItem checks every item of an array in order and returns how many there
// are; a violation's param is prefixed with the item's index.
func eachItem(arr gjson.Result, check func(item gjson.Result) *ValidationError) (int, *ValidationError) {
	var err *ValidationError
	n := 0
	arr.ForEach(func(_, item gjson.Result) bool {
		if err = check(item); err != nil {
			err = under("["+strconv.Itoa(n)+"]", err)
			return false
		}
		n++
		return true
	})
	return n, err
}

// under prefixes a violation found inside a nested value with the path of that
// value, so params read like messages[2].content[0].image_url.url. The
// strings are only built on the way out of a failed validation.
func under(prefix string, err *ValidationError) *ValidationError {
	if err == nil {
		return nil
	}
	switch {
	case err.Param == "":
		err.Param = prefix
	case err.Param[0] == '[':
		err.Param = prefix + err.Param
	default:
		err.Param = prefix + "." + err.Param
	}
	return err
}

// absent reports whether an optional member is missing. An explicit null
// counts as missing: common client libraries send null for unset options.
func absent(v gjson.Result) bool {
	return v.Type == gjson.Null
}

func missing(param string) *ValidationError {
	return invalid(param, "is required")
}

func optString(param string, v gjson.Result) *ValidationError {
	if absent(v) || v.Type == gjson.String {
		return nil
	}
	return invalid(param, "must be a string")
}

func reqString(param string, v gjson.Result) *ValidationError {
	if absent(v) {
		return missing(param)
	}
	return optString(param, v)
}

func optBool(param string, v gjson.Result) *ValidationError {
	if absent(v) || v.IsBool() {
		return nil
	}
	return invalid(param, "must be a boolean")
}

func optObject(param string, v gjson.Result) *ValidationError {
	if absent(v) || v.IsObject() {
		return nil
	}
	return invalid(param, "must be an object")
}

// optNumber checks a number within [lo, hi].
func optNumber(param string, v gjson.Result, lo, hi float64) *ValidationError {
	if absent(v) || (v.Type == gjson.Number && v.Num >= lo && v.Num <= hi) {
		return nil
	}
	return invalid(param, "must be a number between %g and %g", lo, hi)
}

// isInteger reports whether v is a number written as an integer: a count of
// tokens written 1.5 or 1e3 is a client bug worth reporting, not rounding.
func isInteger(v gjson.Result) bool {
	return v.Type == gjson.Number && !strings.ContainsAny(v.Raw, ".eE")
}

// optInteger checks an integer of at least least.
func optInteger(param string, v gjson.Result, least float64) *ValidationError {
	if absent(v) || (isInteger(v) && v.Num >= least) {
		return nil
	}
	return invalid(param, "must be an integer of at least %g", least)
}

func reqInteger(param string, v gjson.Result, least float64) *ValidationError {
	if absent(v) {
		return missing(param)
	}
	return optInteger(param, v, least)
}

// optEnum checks that v is one of values and returns the matching entry of
// values, "" when v is absent.
func optEnum(param string, v gjson.Result, values []string) (string, *ValidationError) {
	if absent(v) {
		return "", nil
	}
	if v.Type == gjson.String {
		for _, s := range values {
			if v.Str == s {
				return s, nil
			}
		}
	}
	return "", invalid(param, "must be one of %s", strings.Join(values, ", "))
}

func reqEnum(param string, v gjson.Result, values []string) (string, *ValidationError) {
	if absent(v) {
		return "", missing(param)
	}
	return optEnum(param, v, values)
}

// optStringArray checks an array whose items are all strings, with at most
// most items when most > 0.
func optStringArray(param string, v gjson.Result, most int) *ValidationError {
	if absent(v) {
		return nil
	}
	if !v.IsArray() {
		return invalid(param, "must be an array of strings")
	}
	n, err := eachItem(v, func(item gjson.Result) *ValidationError {
		return reqString("", item)
	})
	if err != nil {
		return under(param, err)
	}
	if most > 0 && n > most {
		return invalid(param, "must have at most %d items", most)
	}
	return nil
}

// absoluteURI reports whether s is an absolute URI that an upstream can
// fetch or decode: a scheme (RFC 3986), a colon and a non-empty rest with no
// spaces or control characters; http and https URLs also need a host, and
// data URLs the comma that starts their payload.
func absoluteURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 || colon == len(s)-1 {
		return false
	}
	for i := 0; i < colon; i++ {
		c := s[i]
		letter := (c|0x20) >= 'a' && (c|0x20) <= 'z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	for i := colon + 1; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	scheme, rest := s[:colon], s[colon+1:]
	switch {
	case strings.EqualFold(scheme, "http"), strings.EqualFold(scheme, "https"):
		host, ok := strings.CutPrefix(rest, "//")
		if !ok {
			return false
		}
		if end := strings.IndexAny(host, "/?#"); end >= 0 {
			host = host[:end]
		}
		return host != ""
	case strings.EqualFold(scheme, "data"):
		return strings.IndexByte(rest, ',') >= 0
	}
	return true
}

// metadataFields are the members of metadata the gateway reads.
type metadataFields struct {
	operationID, userID gjson.Result
	// withUser is set for the messages shape, which carries the end user
	// in metadata.user_id.
	withUser bool
}

func (f *metadataFields) field(key string) *gjson.Result {
	switch {
	case key == "operation_id":
		return &f.operationID
	case key == "user_id" && f.withUser:
		return &f.userID
	}
	return nil
}

// readMetadata validates metadata and reads operation_id into req, and
// user_id for the messages shape.
func readMetadata(v gjson.Result, req *Request) *ValidationError {
	if absent(v) {
		return nil
	}
	if !v.IsObject() {
		return invalid("metadata", "must be an object")
	}
	f := metadataFields{withUser: req.Dialect == Messages}
	var dup *ValidationError
	v.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return under("metadata", dup)
	}
	if !absent(f.operationID) {
		n := utf8.RuneCountInString(f.operationID.Str)
		if f.operationID.Type != gjson.String || n < 1 || n > 128 {
			return invalid("metadata.operation_id", "must be a string of 1 to 128 characters")
		}
		req.OperationID = strings.Clone(f.operationID.Str)
	}
	if err := optString("metadata.user_id", f.userID); err != nil {
		return err
	}
	if f.userID.Type == gjson.String {
		req.User = strings.Clone(f.userID.Str)
	}
	return nil
}

// deliveryFields are the gateway's own members shared by the completion
// shapes: how the call is delivered, and which operation it belongs to.
type deliveryFields struct {
	stream, metadata, tier, tierStrict, forbidAtlas gjson.Result
}

func (f *deliveryFields) field(key string) *gjson.Result {
	switch key {
	case "stream":
		return &f.stream
	case "metadata":
		return &f.metadata
	case "tier":
		return &f.tier
	case "tier_strict":
		return &f.tierStrict
	case "forbid_atlas_network":
		return &f.forbidAtlas
	}
	return nil
}

func (f *deliveryFields) readStream(req *Request) *ValidationError {
	if err := optBool("stream", f.stream); err != nil {
		return err
	}
	req.Stream = f.stream.Type == gjson.True
	return nil
}

// readRest validates metadata, tier, tier_strict and forbid_atlas_network,
// then the rule that joins them to stream: a batch call is answered at once
// with an eta and its result lands on the call record, so there is nothing
// to stream (SPEC endpoint rule 1).
func (f *deliveryFields) readRest(req *Request) *ValidationError {
	if err := readMetadata(f.metadata, req); err != nil {
		return err
	}
	tier, err := optEnum("tier", f.tier, tiers)
	if err != nil {
		return err
	}
	req.Tier = tier
	if err := optBool("tier_strict", f.tierStrict); err != nil {
		return err
	}
	req.TierStrict = f.tierStrict.Type == gjson.True
	if err := readForbidAtlas(f.forbidAtlas, req); err != nil {
		return err
	}
	if req.Stream && req.Tier == "batch" {
		return invalid("stream", "must not be true on the batch tier")
	}
	return nil
}

func readForbidAtlas(v gjson.Result, req *Request) *ValidationError {
	if err := optBool("forbid_atlas_network", v); err != nil {
		return err
	}
	req.ForbidAtlasNetwork = v.Type == gjson.True
	return nil
}

// readUser validates the end-user id of the chat and embeddings shapes.
func readUser(v gjson.Result, req *Request) *ValidationError {
	if err := optString("user", v); err != nil {
		return err
	}
	if v.Type == gjson.String {
		req.User = strings.Clone(v.Str)
	}
	return nil
}

// readModel validates the required model id and copies it into req.
func readModel(v gjson.Result, req *Request) *ValidationError {
	if err := reqString("model", v); err != nil {
		return err
	}
	req.Model = strings.Clone(v.Str)
	return nil
}

// chatPartFields are the members of a chat content part; embeddings inputs
// made of content objects use the same parts.
type chatPartFields struct {
	typ, text, imageURL gjson.Result
}

func (f *chatPartFields) field(key string) *gjson.Result {
	switch key {
	case "type":
		return &f.typ
	case "text":
		return &f.text
	case "image_url":
		return &f.imageURL
	}
	return nil
}

// imageURLFields are the members of a chat part's image_url.
type imageURLFields struct {
	url, detail gjson.Result
}

func (f *imageURLFields) field(key string) *gjson.Result {
	switch key {
	case "url":
		return &f.url
	case "detail":
		return &f.detail
	}
	return nil
}

// validateChatPart checks one ContentPart (SPEC 2.3): a text part with its
// text, or an image_url part whose url is an absolute URI.
func validateChatPart(part gjson.Result) *ValidationError {
	if !part.IsObject() {
		return invalid("", "must be a content part object")
	}
	var f chatPartFields
	var dup *ValidationError
	part.ForEach(func(k, v gjson.Result) bool { return keep(f.field(k.Str), k, v, &dup) })
	if dup != nil {
		return dup
	}
	typ, err := reqEnum("type", f.typ, chatPartTypes)
	if err != nil {
		return err
	}
	if typ == "text" {
		return reqString("text", f.text)
	}
	if absent(f.imageURL) {
		return missing("image_url")
	}
	if !f.imageURL.IsObject() {
		return invalid("image_url", "must be an object")
	}
	var u imageURLFields
	f.imageURL.ForEach(func(k, v gjson.Result) bool { return keep(u.field(k.Str), k, v, &dup) })
	if dup != nil {
		return under("image_url", dup)
	}
	if err := reqString("image_url.url", u.url); err != nil {
		return err
	}
	if !absoluteURI(u.url.Str) {
		return invalid("image_url.url", "must be an absolute URI, such as an https or data URL")
	}
	_, err = optEnum("image_url.detail", u.detail, imageDetails)
	return err
}
