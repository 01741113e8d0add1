package agent

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Prefixes of the limits keys that select callers by their credential
// rather than by principal name (AUTH-8): `scope:NAME` selects the callers
// whose token grants scope NAME, `claim:NAME=VALUE` those whose token's
// claim NAME has VALUE (or holds it, for an array claim). A principal
// whose name starts with one of them cannot have a rule of its own.
const (
	ScopeSelector = "scope:"
	ClaimSelector = "claim:"
)

// selectorRule is a limits rule keyed by a scope or claim selector.
type selectorRule struct {
	key          string // the limits key, e.g. "scope:a2a.read"
	scope        string // the scope of a scope: key
	claim, value string // the claim and value of a claim: key
	rule         LimitRule
}

// matches reports whether id is selected.
func (r *selectorRule) matches(id *Identity) bool {
	if r.scope != "" {
		return id.HasScope(r.scope)
	}
	return id.HasClaim(r.claim, r.value)
}

// isSelector reports whether a limits key is a scope or claim selector.
func isSelector(key string) bool {
	return strings.HasPrefix(key, ScopeSelector) || strings.HasPrefix(key, ClaimSelector)
}

// ValidateLimitKey checks a limits key: `*`, a principal name, or a
// `scope:NAME` (NAME an RFC 6749 scope token) or `claim:NAME=VALUE`
// selector (NAME without spaces or `=`, VALUE non-empty without control
// characters).
func ValidateLimitKey(key string) error {
	_, err := parseSelector(key)
	return err
}

// parseSelector returns the selector rule of key (no rule values), or an
// error for a malformed selector; a key that is no selector gives a zero
// rule.
func parseSelector(key string) (selectorRule, error) {
	switch {
	case key == "":
		return selectorRule{}, fmt.Errorf("the key must not be empty (use * for every principal)")
	case strings.HasPrefix(key, ScopeSelector):
		s := strings.TrimPrefix(key, ScopeSelector)
		if !a2a.ValidScope(s) {
			return selectorRule{}, fmt.Errorf("%q: the scope must be one RFC 6749 scope token (printable ASCII without spaces, \" or \\)", key)
		}
		return selectorRule{key: key, scope: s}, nil
	case strings.HasPrefix(key, ClaimSelector):
		name, value, ok := strings.Cut(strings.TrimPrefix(key, ClaimSelector), "=")
		if !ok || name == "" || value == "" {
			return selectorRule{}, fmt.Errorf("%q: want claim:NAME=VALUE", key)
		}
		for _, c := range name {
			if c <= ' ' || c == 0x7f {
				return selectorRule{}, fmt.Errorf("%q: the claim name must not contain spaces or control characters", key)
			}
		}
		for _, c := range value {
			if c < ' ' || c == 0x7f {
				return selectorRule{}, fmt.Errorf("%q: the claim value must not contain control characters", key)
			}
		}
		return selectorRule{key: key, claim: name, value: value}, nil
	}
	return selectorRule{}, nil
}

// splitRules separates limits rules keyed by principal name or `*` from
// the scope and claim selectors, which are sorted by key. Malformed
// selectors are dropped (Config validation reports them).
func splitRules(rules map[string]LimitRule) (map[string]LimitRule, []selectorRule) {
	named := make(map[string]LimitRule, len(rules))
	var sel []selectorRule
	for k, r := range rules {
		if !isSelector(k) {
			named[k] = r
			continue
		}
		s, err := parseSelector(k)
		if err != nil {
			continue
		}
		s.rule = r
		sel = append(sel, s)
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].key < sel[j].key })
	return named, sel
}

// callerRule is the rule that applies to one caller and the name under
// which its counters count the caller.
type callerRule struct {
	rule LimitRule
	// key is "" for a rule named by principal or `*`, else the keys of the
	// matching selectors: a caller counts apart under each set of them.
	key string
}

// ruleFor returns the rule of a caller (AUTH-6, AUTH-8) and whether one
// applies. Precedence: a rule named by the principal; else the scope and
// claim selectors the credential matches, merged into the most
// permissive rule (see mergeRules); else `*`.
func (l *limits) ruleFor(principal string, id *Identity) (callerRule, bool) {
	if principal != AnyPrincipal && !isSelector(principal) {
		if r, ok := l.rules[principal]; ok {
			return callerRule{rule: r}, true
		}
	}
	if id != nil {
		var matched []LimitRule
		var keys []string
		for i := range l.selectors {
			if s := &l.selectors[i]; s.matches(id) {
				matched = append(matched, s.rule)
				keys = append(keys, s.key)
			}
		}
		if len(matched) > 0 {
			return callerRule{rule: mergeRules(matched), key: strings.Join(keys, "\x00")}, true
		}
	}
	r, ok := l.rules[AnyPrincipal]
	return callerRule{rule: r}, ok
}

// mergeRules returns the most permissive combination of rs (AUTH-8: a
// caller matching several scope or claim selectors gets what any of them
// allows): a method any rule allows (an empty allow-list allows all); no
// rate if any rule has none, else the highest rate and burst; no turn
// limit if any rule has none, else the highest. It counts in the counters
// of the first rule (by selector key).
func mergeRules(rs []LimitRule) LimitRule {
	out := rs[0]
	out.AllowMethods = slices.Clone(out.AllowMethods)
	out.Burst = effectiveBurst(out)
	for _, r := range rs[1:] {
		if len(out.AllowMethods) > 0 {
			if len(r.AllowMethods) == 0 {
				out.AllowMethods = nil
			} else {
				for _, m := range r.AllowMethods {
					if !slices.Contains(out.AllowMethods, m) {
						out.AllowMethods = append(out.AllowMethods, m)
					}
				}
			}
		}
		if out.Rate > 0 {
			if r.Rate <= 0 {
				out.Rate, out.Burst = 0, 0
			} else {
				out.Rate = max(out.Rate, r.Rate)
				out.Burst = max(out.Burst, effectiveBurst(r))
			}
		}
		if out.MaxTurns > 0 {
			if r.MaxTurns <= 0 {
				out.MaxTurns = 0
			} else {
				out.MaxTurns = max(out.MaxTurns, r.MaxTurns)
			}
		}
	}
	return out
}

// effectiveBurst is r's burst with its default applied (0 without a rate).
func effectiveBurst(r LimitRule) int {
	if r.Rate <= 0 {
		return 0
	}
	if r.Burst > 0 {
		return r.Burst
	}
	return max(1, int(math.Ceil(r.Rate)))
}
