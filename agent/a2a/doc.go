// Package a2a holds the A2A 1.0 wire types of caddy-a2a: the ProtoJSON shapes
// of the Agent Card, messages, parts, tasks, streaming events, requests,
// responses and errors, with the exact JSON field names and enum strings of
// the A2A 1.0 specification. It has no dependencies outside the standard
// library and no behaviour beyond encoding and small helpers.
package a2a
