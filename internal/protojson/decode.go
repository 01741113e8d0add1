package protojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Decode decodes a JSON-RPC call's params (or an HTTP+JSON body) into v,
// naming the offending field. Keys are first normalised by the ProtoJSON
// input rule (RPC-14, normalizeProtoJSON): proto field names are accepted
// besides the JSON names.
func Decode(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return a2a.ErrInvalidParams("params", "must be an object")
	}
	raw, err := normalizeProtoJSON(raw, reflect.TypeOf(v))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "params"
			}
			if te.Value == "unknown enum value" {
				return a2a.ErrInvalidParams(field, "is not a known enum value")
			}
			return a2a.ErrInvalidParams(field, fmt.Sprintf("must be of JSON type %s", jsonKind(te.Type.Kind().String())))
		}
		return a2a.ErrInvalidParams("params", sanitizeDecodeError(err))
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int32", "int64", "uint", "uint32", "uint64", "float64", "float32":
		return "number"
	case "bool":
		return "boolean"
	case "ptr":
		return "object"
	}
	return k
}

// sanitizeDecodeError returns a decode error's text, cut to 200 bytes: it
// names JSON syntax and types, never request content beyond that.
func sanitizeDecodeError(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
