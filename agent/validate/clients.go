package validate

import "fmt"

// Known clients that cannot read a valid card, and the card shapes that
// trip them (CARD-4, CARD-9). Each such finding names the client, what
// it cannot read and how to serve it anyway; a card in a client's
// compatibility form gets a warning naming who cannot read that form.

// requirementForms counts the shapes of the scopes in securityRequirements
// (the card's and every skill's): ProtoJSON {"list":[…]}, bare arrays (the
// form a2a-go <= v2.3.1 reads), and anything else.
type requirementForms struct {
	protoJSON, bare         int
	firstProto, firstBare   string // pointers of the first of each
	badPointers, badSchemes []string
}

// scan classifies the requirements list v at ptr.
func (rf *requirementForms) scan(ptr string, v any) {
	arr, _ := v.([]any)
	for i, r := range arr {
		m, _ := r.(map[string]any)
		schemes, ok := m["schemes"].(map[string]any)
		if !ok {
			continue // a legacy shape or none: security() reports it
		}
		for _, name := range requirementNames(r) {
			p := Pointer(append(splitPtr(ptr), i, "schemes", name)...)
			switch scopes := schemes[name].(type) {
			case map[string]any:
				if l, ok := scopes["list"]; ok && !isStringArray(l) {
					rf.badPointers, rf.badSchemes = append(rf.badPointers, p), append(rf.badSchemes, name)
					continue
				}
				rf.protoJSON++
				if rf.firstProto == "" {
					rf.firstProto = p
				}
			case []any:
				if !isStringArray(scopes) {
					rf.badPointers, rf.badSchemes = append(rf.badPointers, p), append(rf.badSchemes, name)
					continue
				}
				rf.bare++
				if rf.firstBare == "" {
					rf.firstBare = p
				}
			default:
				rf.badPointers, rf.badSchemes = append(rf.badPointers, p), append(rf.badSchemes, name)
			}
		}
	}
}

// isStringArray reports whether v is a JSON array of strings.
func isStringArray(v any) bool {
	arr, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range arr {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// clients reports which known clients cannot read the card's
// securityRequirements, and scopes of no known shape.
func (c *checker) clients(card map[string]any) {
	var rf requirementForms
	rf.scan("/securityRequirements", card["securityRequirements"])
	skills, _ := card["skills"].([]any)
	for i, s := range skills {
		if m, ok := s.(map[string]any); ok {
			rf.scan(Pointer("skills", i, "securityRequirements"), m["securityRequirements"])
		}
	}
	for i, p := range rf.badPointers {
		c.add(Error, p, fmt.Sprintf("the scopes of scheme %q are not a list of strings", rf.badSchemes[i]),
			`write {"list": ["scope", …]} (an empty list when no scope is needed)`)
	}
	if rf.protoJSON > 0 {
		c.add(Info, rf.firstProto,
			`a2a-go (the official Go SDK) up to v2.3.1 cannot read this card: it reads the scopes of securityRequirements only as bare arrays (a2a-go issue 430), so its card resolver fails with "cannot unmarshal object into Go struct field AgentCard.securityRequirements.schemes"; the ProtoJSON form here is the A2A 1.0 one and right for every other client`,
			"for a2a-go clients, serve the card with `security_requirements_form a2a-go` (caddy-a2a card option) or use an a2a-go release that reads the ProtoJSON form")
	}
	if rf.bare > 0 {
		c.add(Warning, rf.firstBare,
			`securityRequirements scopes are bare arrays (the a2a-go <= v2.3.1 compatibility form), not the A2A 1.0 ProtoJSON form {"list": […]}: a2a-go reads this card, but ProtoJSON parsers and strict A2A 1.0 validators reject it`,
			"serve it only where a2a-go clients need it (caddy-a2a: `security_requirements_form a2a-go`); otherwise write {\"schemes\": {\"<scheme>\": {\"list\": […]}}}")
	}
}
