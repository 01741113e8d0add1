package card

import (
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The values of Config.SecurityRequirementsForm (security_requirements_form).
const (
	// FormProtoJSON writes securityRequirements as A2A 1.0 specifies
	// (ProtoJSON, A2A PR 2046): [{"schemes":{"bearerAuth":{"list":[]}}}].
	// The default.
	FormProtoJSON = "protojson"
	// FormA2AGo writes them as the official Go SDK a2a-go up to v2.3.1
	// reads them (a2a-go issue 430): [{"schemes":{"bearerAuth":[]}}]. That
	// SDK's card resolver fails on the ProtoJSON form of any secured card;
	// ProtoJSON parsers, in turn, reject this form.
	FormA2AGo = "a2a-go"
)

// requirementsForms lists the valid forms, in the order errors name them.
var requirementsForms = []string{FormProtoJSON, FormA2AGo}

// checkRequirementsForm reports an unknown security_requirements_form.
func checkRequirementsForm(v string) error {
	switch v {
	case "", FormProtoJSON, FormA2AGo:
		return nil
	}
	return fmt.Errorf("card security_requirements_form: %q is not a form (valid: %s, %s)", v, requirementsForms[0], requirementsForms[1])
}

// RequirementsForm is the a2a form of the configured
// security_requirements_form (FormProtoJSON when unset or unknown).
func (c *Config) RequirementsForm() a2a.RequirementsForm {
	if c != nil && c.SecurityRequirementsForm == FormA2AGo {
		return a2a.RequirementsBare
	}
	return a2a.RequirementsProtoJSON
}
