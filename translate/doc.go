// Package translate holds the gateway's wire-shape code: validation of each
// client request shape, conversion of requests, responses and SSE streams
// between the OpenAI chat-completions, OpenAI responses and Anthropic messages
// dialects, and the normalized prompt that fingerprints hash.
//
// Everything here is pure: functions over byte slices, read with gjson and
// written with sjson or append buffers. Nothing does I/O and nothing decodes a
// whole body into generic maps.
package translate
