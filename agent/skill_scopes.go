package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SkillMetadataKey is the key, inside the message's metadata namespace
// (metadata.<Config.Namespace>.skill, by default metadata.iac_code.skill),
// of the skill hint: the id of the card skill the message is meant for
// (AUTH-8). A2A 1.0 has no field for it; the request's own metadata
// (params.metadata.<ns>.skill) is read too. A message naming a skill that
// requires scopes (Config.SkillScopes) is refused with PERMISSION_DENIED
// unless the caller's credential grants them all.
const SkillMetadataKey = "skill"

// skillHints returns the skill ids a send names in its message's and its
// request's metadata.<ns>.skill; an error when the value is not a string.
func skillHints(req *a2a.SendMessageRequest, ns string) ([]string, error) {
	var out []string
	read := func(md map[string]any, field string) error {
		inner, ok := md[ns].(map[string]any)
		if !ok {
			return nil
		}
		v, ok := inner[SkillMetadataKey]
		if !ok || v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return a2a.ErrInvalidParams(field+"."+ns+"."+SkillMetadataKey, "must be a skill id (a string)")
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
		return nil
	}
	if req == nil {
		return nil, nil
	}
	if req.Message != nil {
		if err := read(req.Message.Metadata, "message.metadata"); err != nil {
			return nil, err
		}
	}
	if err := read(req.Metadata, "metadata"); err != nil {
		return nil, err
	}
	return out, nil
}

// skillScopes is the interceptor of the skills' required scopes (AUTH-8)
// for every binding: a send whose skill hint names a skill the caller's
// credential lacks a scope for is refused with PERMISSION_DENIED naming
// the missing scopes; GetExtendedAgentCard lists only the skills the
// caller may use (see UsableSkills).
func (s *Service) skillScopes(ctx context.Context, inv *Invocation, next Next) (any, error) {
	if len(s.cfg.SkillScopes) == 0 || inv.Refused != nil {
		return next(ctx, inv)
	}
	switch inv.Method {
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		req, _ := inv.Request.(*a2a.SendMessageRequest)
		hints, err := skillHints(req, s.cfg.Namespace)
		if err != nil {
			return nil, err
		}
		for _, id := range hints {
			if missing := inv.Call.Identity.MissingScopes(s.cfg.SkillScopes[id]); len(missing) > 0 {
				return nil, errSkillScopes(id, missing)
			}
		}
	case a2a.MethodGetExtendedAgentCard:
		may := s.skillFilter(inv.Call.Identity)
		res, err := next(context.WithValue(ctx, skillFilterKey{}, may), inv)
		if c, ok := res.(*a2a.AgentCard); ok && err == nil {
			// The card hook filters before it signs; a hook that did not
			// is filtered here (its signatures no longer hold).
			if f := filterSkills(c, may); f != c {
				f.Signatures = nil
				res = f
			}
		}
		return res, err
	}
	return next(ctx, inv)
}

// errSkillScopes refuses a message for skill id whose caller lacks the
// scopes missing.
func errSkillScopes(id string, missing []string) error {
	return &a2a.Error{
		Code:     a2a.CodePermissionDenied,
		Message:  "Skill " + id + " requires the scope " + strings.Join(missing, " ") + ", which this caller's credential does not grant",
		Metadata: map[string]string{"skill": id, "missingScopes": strings.Join(missing, " ")},
	}
}

// skillFilter returns whether the caller with identity id may use a skill.
func (s *Service) skillFilter(id *Identity) func(string) bool {
	return func(skill string) bool {
		return len(id.MissingScopes(s.cfg.SkillScopes[skill])) == 0
	}
}

type skillFilterKey struct{}

// UsableSkills returns c with only the skills the caller may use, for the
// Config.ExtendedCard hook to apply before it signs the card (AUTH-8): ctx
// is the hook's, which carries the caller's filter. c itself is not
// changed; c is returned as is when every skill is usable or ctx carries
// no filter.
func UsableSkills(ctx context.Context, c *a2a.AgentCard) *a2a.AgentCard {
	may, _ := ctx.Value(skillFilterKey{}).(func(string) bool)
	if may == nil {
		return c
	}
	return filterSkills(c, may)
}

// filterSkills returns a copy of c without the skills may refuses, or c
// when it refuses none.
func filterSkills(c *a2a.AgentCard, may func(string) bool) *a2a.AgentCard {
	if c == nil || !slices.ContainsFunc(c.Skills, func(s a2a.AgentSkill) bool { return !may(s.ID) }) {
		return c
	}
	out := *c
	out.Skills = make([]a2a.AgentSkill, 0, len(c.Skills))
	for _, s := range c.Skills {
		if may(s.ID) {
			out.Skills = append(out.Skills, s)
		}
	}
	return &out
}
