// Package demoupstream is a deterministic model server that speaks the
// OpenAI and Anthropic HTTP dialects byte for byte: request validation,
// response bodies, SSE event sequences and error bodies. It is the
// gateway's embedded default upstream and the test double of every
// integration test, so the behaviour below is a contract: tests elsewhere
// depend on it exactly.
//
// # Routes
//
// Routing is by path suffix, so any prefix works (a base URL of
// http://127.0.0.1:9099/v1 or http://127.0.0.1:9099/openai/v1 alike):
//
//	POST .../chat/completions   OpenAI chat completions
//	POST .../responses          OpenAI Responses API
//	POST .../embeddings         OpenAI embeddings
//	GET  .../models             OpenAI model list: demo-chat, demo-mini, demo-embed
//	POST .../messages           Anthropic Messages
//	POST .../messages/count_tokens  Anthropic token count: {"input_tokens": N}
//
// Anything else is a 404 in the OpenAI error shape. Anthropic paths require
// the anthropic-version header (400 otherwise). With Config.APIKey set,
// OpenAI paths (models included) require "Authorization: Bearer <key>" and
// Anthropic paths "x-api-key: <key>" (401 otherwise). Every response carries
// an x-request-id header ("req_" + 32 hex); Anthropic responses carry the
// same value in request-id.
//
// A model call is checked in this order: key, anthropic-version,
// Config.FailStatus, request validation, then the directives. FailStatus
// and [[status:NNN]] answer with the dialect's error body; FailStatus values
// outside 400-599 answer 500, and [[status:NNN]] outside 400-599 is ignored.
// GET models is not a model call: FailStatus does not apply to it.
// Config.Latency delays every response's headers.
//
// # Texts
//
// The last user text is the text of the last user message (string content,
// or its text parts or blocks joined with a single space) with the
// directives removed and its words joined by single spaces. A message that
// is only tool results (an Anthropic user message of tool_result blocks, an
// OpenAI "tool" message, a Responses function_call_output item) is not a
// user message. For the Responses API a string input is the user message.
//
// The reply text, also normalized to single spaces, is:
//
//   - "Tool result: <text>" when the last message is a tool result (the
//     content text of the OpenAI tool message, of the last tool_result block
//     of the Anthropic user message, or the output of the Responses
//     function_call_output item);
//   - otherwise "w1 w2 ... wN" when the last user text held [[words:N]]
//     (N is capped at 100000);
//   - otherwise "Echo: <last user text>" ("Echo:" when that text is empty).
//
// # Graded quality
//
// A model whose name carries a quality grade, "-q" and a number NN from 0
// to 100 (one to three digits that end the name or are followed by a
// character other than a letter or digit, as in demo-cheap-q80 or
// demo-q7-mini), answers the "Echo:" reply correctly for NN% of prompts and
// otherwise answers "Wrong: <last user text>" ("Wrong:" when that text is
// empty). Which prompts it gets right is deterministic: the first 8 bytes
// of sha256(model + "\x00" + last user text), read big-endian, modulo 100,
// below NN. The model is the request's model field as sent. A wrong answer
// has as many words as the right one, so usage, streams and everything else
// are unchanged; tool calls, tool-result replies and [[words:N]] replies
// are not graded. This lets a router's evaluators tell a cheap, weaker
// model from a strong one with an ordinary regex such as "^Echo: ".
//
// # Tools
//
// When the request has function tools, tool_choice is not "none" and the
// last message is not a tool result, the model calls a tool instead of
// answering: the tool tool_choice names, else the first one. Hosted or
// server tools are never called. The arguments hold one value per property
// of the tool's JSON schema (only the required ones when "required" is
// present), in the schema's property order, as compact JSON: string -> the
// last user text, integer and number -> 42, boolean -> true, array -> [],
// object -> {}, any other or missing type -> null (for a type list such as
// ["string","null"] the first non-null type counts). The call id is
// "call_" (OpenAI, Responses) or "toolu_" (Anthropic) followed by the first
// 24 hex characters of sha256(name + arguments). OpenAI chat answers with
// finish_reason "tool_calls"; Anthropic with stop_reason "tool_use" and a
// single tool_use block; the Responses API with a single function_call item.
//
// # Usage
//
// Input tokens are the whitespace-separated words of all text in the
// request: every message's text content (tool results included), system
// and instructions, with directives counted as written. Tool definitions
// and tool-call arguments do not count. Output tokens are the words of the
// reply text, or ceil(len(arguments)/4) for a tool call. The total is
// their sum.
//
// # Directives
//
// The last user text may carry test controls, each "[[name:digits]]":
//
//   - [[status:NNN]] answers with HTTP status NNN and the dialect's error
//     body, with the real error types (OpenAI: 400 invalid_request_error,
//     429 "requests" with code rate_limit_exceeded, 5xx server_error;
//     Anthropic: 400 invalid_request_error, 401 authentication_error, 403
//     permission_error, 404 not_found_error, 429 rate_limit_error, 500
//     api_error, 503 and 529 overloaded_error, 504 timeout_error).
//   - [[sleep:MS]] waits MS milliseconds before the response headers (before
//     a [[status]] error too).
//   - [[cut:N]] aborts a stream after N content pieces have been sent and
//     flushed, without ending the stream; with fewer than N pieces the abort
//     comes after the last piece. Non-streamed calls ignore it.
//   - [[words:N]] replaces the reply text as described above.
//
// When a directive appears twice, the last one counts. Embedding inputs are
// not searched for directives.
//
// # Streams
//
// Streams use Content-Type "text/event-stream; charset=utf-8", are never
// compressed, and flush after every event. The reply text streams as
// pieces: the first word, then " " + word for each next word. Tool-call
// arguments stream in fragments of at most 8 bytes, never fewer than two;
// for [[cut:N]] each fragment counts as a piece.
//
// OpenAI chat: a chunk with delta {"role":"assistant","content":"","refusal":null},
// one chunk per piece with delta {"content":piece}, a chunk with an empty
// delta and the finish_reason, with stream_options.include_usage a chunk
// with "choices":[] and the usage (every earlier chunk then carries
// "usage":null), then "data: [DONE]". All chunks share one id and created.
// A tool call's first chunk carries the role, content null and the call
// (index 0, id, type "function", name, arguments ""); each next chunk
// carries one arguments fragment.
//
// Anthropic: message_start (usage input_tokens, output_tokens 1),
// content_block_start, ping, one content_block_delta per piece (text_delta,
// or input_json_delta for a tool_use block started with input {}),
// content_block_stop, message_delta (stop_reason and usage.output_tokens),
// message_stop, each with its "event:" line.
//
// Responses: response.created, response.in_progress,
// response.output_item.added, then for text response.content_part.added,
// response.output_text.delta per piece, response.output_text.done,
// response.content_part.done, or for a call
// response.function_call_arguments.delta per fragment and
// response.function_call_arguments.done; then response.output_item.done and
// response.completed with the full response and its usage. Events carry
// "event:" lines and a sequence_number counting from 0.
//
// # Embeddings
//
// Input is a string, an array of strings, an array of token ids, an array
// of token-id arrays, or an array of {"content":[{"type":"text","text":...}
// | {"type":"image_url","image_url":{"url":...}}]} objects. Each input gets
// a unit-length vector of "dimensions" (default 16, at most 4096) float32
// values derived from sha256 of its text: the string, the token ids joined
// by spaces, or the parts' texts and image URLs joined by spaces (see embed
// for the exact derivation). encoding_format "base64" returns the
// little-endian float32 bytes base64-encoded. Usage prompt_tokens and
// total_tokens count the words of those texts.
//
// # Validation
//
// Requests are validated like the real APIs, each failure a 400 with the
// real error shape and a message naming the field. OpenAI: model required;
// chat messages required and non-empty, role in the enum, temperature 0..2,
// tool messages answering the tool_calls of the assistant message just
// before them (and those calls all answered before the conversation goes
// on), tool_choice naming a listed tool; Responses input required,
// function_call_output answering an earlier function_call unless
// previous_response_id is set. Anthropic: model, max_tokens (integer >= 1)
// and non-empty messages required, roles only user and assistant (system
// goes in the top-level system field), temperature 0..1, every tool_result
// answering a tool_use of the assistant message just before it, and every
// tool_use answered in the next message. With Config.Strict, unknown
// top-level fields are rejected: "Unrecognized request argument supplied:
// <name>" (OpenAI) or "<name>: Extra inputs are not permitted" (Anthropic).
//
// # Bodies
//
// Non-streamed JSON bodies, errors included, are gzip-compressed when the
// request's Accept-Encoding allows gzip. Ids have the real shapes
// (chatcmpl-..., msg_01... for Anthropic messages, resp_..., msg_... and
// fc_... for Responses items); ids and created/created_at (the current
// unix time) are the only parts of a response that vary between runs.
package demoupstream
