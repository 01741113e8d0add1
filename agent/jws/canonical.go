package jws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jcs"
)

// MaxCardBytes bounds the size of a card accepted for canonicalization.
const MaxCardBytes = 1 << 20

// presence says how a field of the card schema treats default values.
type presence int

const (
	plain    presence = iota // dropped when "", 0, false, [], {} or null
	required                 // always kept
	optional                 // proto3 optional or a oneof member: kept when present
)

// node describes one field of the AgentCard schema (A2A 1.0 proto).
type node struct {
	p      presence
	fields map[string]*node // object with known fields
	elem   *node            // array elements (nil: scalars)
	values *node            // map values (nil: scalar values)
	free   bool             // free-form JSON (google.protobuf.Struct): kept as is
	// stringList marks a StringList message ({"list": […]}): a bare array
	// there (the a2a-go form of securityRequirements scopes, CARD-4) is
	// read as {"list": array}, the card's ProtoJSON form, so both
	// renderings of one card have one payload.
	stringList bool
}

func obj(p presence, fields map[string]*node) *node { return &node{p: p, fields: fields} }
func list(p presence, elem *node) *node             { return &node{p: p, elem: elem} }
func mapOf(p presence, values *node) *node          { return &node{p: p, values: values} }

var (
	rq  = &node{p: required}
	opt = &node{p: optional}
	pl  = &node{p: plain}
)

func flow(fields ...string) *node {
	m := map[string]*node{"refreshUrl": pl, "scopes": mapOf(required, nil)}
	for _, f := range fields {
		m[f] = rq
	}
	return obj(optional, m)
}

var securityRequirement = obj(plain, map[string]*node{
	"schemes": mapOf(plain, &node{p: plain, fields: map[string]*node{"list": list(plain, nil)}, stringList: true}),
})

// cardSchema is the AgentCard message with its field presence rules.
var cardSchema = obj(required, map[string]*node{
	"name":        rq,
	"description": rq,
	"supportedInterfaces": list(required, obj(plain, map[string]*node{
		"url": rq, "protocolBinding": rq, "tenant": pl, "protocolVersion": rq,
	})),
	"provider":         obj(plain, map[string]*node{"organization": rq, "url": rq}),
	"version":          rq,
	"documentationUrl": opt,
	"capabilities": obj(required, map[string]*node{
		"streaming":         opt,
		"pushNotifications": opt,
		"extendedAgentCard": opt,
		"extensions": list(plain, obj(plain, map[string]*node{
			"uri": pl, "description": pl, "required": pl, "params": {p: plain, free: true},
		})),
	}),
	"securitySchemes": mapOf(plain, obj(plain, map[string]*node{
		"apiKeySecurityScheme":   obj(optional, map[string]*node{"description": pl, "location": rq, "name": rq}),
		"httpAuthSecurityScheme": obj(optional, map[string]*node{"description": pl, "scheme": rq, "bearerFormat": pl}),
		"oauth2SecurityScheme": obj(optional, map[string]*node{
			"description":       pl,
			"oauth2MetadataUrl": pl,
			"flows": obj(required, map[string]*node{
				"authorizationCode": flow("authorizationUrl", "tokenUrl", "pkceRequired"),
				"clientCredentials": flow("tokenUrl"),
				"deviceCode":        flow("deviceAuthorizationUrl", "tokenUrl"),
				"implicit":          flow("authorizationUrl"),
				"password":          flow("tokenUrl"),
			}),
		}),
		"openIdConnectSecurityScheme": obj(optional, map[string]*node{"description": pl, "openIdConnectUrl": rq}),
		"mtlsSecurityScheme":          obj(optional, map[string]*node{"description": pl}),
	})),
	"securityRequirements": list(plain, securityRequirement),
	"defaultInputModes":    list(required, nil),
	"defaultOutputModes":   list(required, nil),
	"skills": list(required, obj(plain, map[string]*node{
		"id": rq, "name": rq, "description": rq, "tags": list(required, nil),
		"examples": list(plain, nil), "inputModes": list(plain, nil), "outputModes": list(plain, nil),
		"securityRequirements": list(plain, securityRequirement),
	})),
	"iconUrl": opt,
})

func init() {
	// pkceRequired is a plain bool, not required; flow() marks it required
	// only to keep the helper short.
	cardSchema.fields["securitySchemes"].values.fields["oauth2SecurityScheme"].fields["flows"].fields["authorizationCode"].fields["pkceRequired"] = pl
}

// isDefault reports whether v is a ProtoJSON default value.
func isDefault(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case json.Number:
		f, err := t.Float64()
		return err == nil && f == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// prune applies the field presence rules of n to v, dropping unknown
// members of known objects.
func prune(n *node, v any) any {
	if arr, ok := v.([]any); ok && n.stringList {
		v = map[string]any{"list": arr}
	}
	switch {
	case n.free:
		return v
	case n.fields != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, fv := range m {
			fn, known := n.fields[k]
			if !known {
				continue
			}
			pv := prune(fn, fv)
			if fn.p == plain && isDefault(pv) {
				continue
			}
			if fn.p == optional && pv == nil {
				continue
			}
			out[k] = pv
		}
		return out
	case n.elem != nil:
		arr, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = prune(n.elem, e)
		}
		return out
	case n.values != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = prune(n.values, e)
		}
		return out
	}
	return v
}

// cleanEmpty removes every empty string, null, empty array and empty
// object, recursively (what the A2A Python and JS SDKs do); it returns
// nil when v itself becomes empty.
func cleanEmpty(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		if t == "" {
			return nil
		}
	case []any:
		var out []any
		for _, e := range t {
			if c := cleanEmpty(e); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if c := cleanEmpty(e); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

func decodeCard(raw []byte) (map[string]any, error) {
	if len(raw) > MaxCardBytes {
		return nil, fmt.Errorf("card is larger than %d bytes", MaxCardBytes)
	}
	// jcs.Canonicalize rejects duplicate members and invalid UTF-8 first.
	canon, err := jcs.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing card: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errors.New("parsing card: not a JSON object")
	}
	return m, nil
}

// CanonicalCard returns the signing payload of the card JSON raw, per A2A
// 1.0 §8.4.1: the card's ProtoJSON form with field presence applied
// (unknown members dropped, optional fields kept when set, required fields
// always kept, other default values dropped), without `signatures`,
// canonicalized with RFC 8785. Scopes of securityRequirements written as
// bare arrays (the a2a-go form, CARD-4) are read as their ProtoJSON
// {"list": […]}, so a card has one payload in either form (and as the
// proto message gRPC carries).
func CanonicalCard(raw []byte) ([]byte, error) {
	m, err := decodeCard(raw)
	if err != nil {
		return nil, err
	}
	return canonicalFrom(m, false)
}

// SDKCanonicalCard returns the payload the A2A Python and JS SDKs sign:
// like CanonicalCard, but with every empty string, array and object
// removed, required ones included. It equals CanonicalCard for cards
// without empty values.
func SDKCanonicalCard(raw []byte) ([]byte, error) {
	m, err := decodeCard(raw)
	if err != nil {
		return nil, err
	}
	return canonicalFrom(m, true)
}

func canonicalFrom(m map[string]any, sdk bool) ([]byte, error) {
	delete(m, "signatures")
	v := prune(cardSchema, m)
	if sdk {
		v = cleanEmpty(v)
		if v == nil {
			v = map[string]any{}
		}
	}
	var buf bytes.Buffer
	if err := jcs.Append(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CardPayload returns the signing payload (CanonicalCard) of c.
func CardPayload(c *a2a.AgentCard) ([]byte, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding card: %w", err)
	}
	return CanonicalCard(raw)
}
