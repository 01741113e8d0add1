package card

import (
	"reflect"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// derivedFacts is what an agent with every option on says.
var derivedFacts = Facts{
	Security:          &Security{Bearer: true},
	PushNotifications: true,
	ThinkingTypes:     []string{"tool_trace"},
	LegacyV03:         true,
	EventLogSize:      1000,
	DedupeWindow:      10 * time.Minute,
	DedupeAlways:      true,
	Bindings:          []string{"JSONRPC", "HTTP+JSON", "GRPC"},
	WebSocketPath:     "/ws",
	PushSign:          []jws.SignKey{{Alg: "es256", KID: "p1", KeyFile: "p.pem"}},
}

// A card that sets no fact says what the agent says; one that sets facts
// keeps them (issue 27 item 6: explicit card fields are overrides).
func TestFactsOr(t *testing.T) {
	if got := (Facts{}).Or(derivedFacts); !reflect.DeepEqual(got, derivedFacts) {
		t.Errorf("unset card facts: %+v, want the derived %+v", got, derivedFacts)
	}
	explicit := Facts{
		Security:      &Security{APIKey: true},
		ThinkingTypes: []string{},
		EventLogSize:  50,
		DedupeWindow:  time.Minute,
		Bindings:      []string{"JSONRPC"},
		WebSocketPath: "/rpc/ws",
		PushSign:      []jws.SignKey{},
	}
	got := explicit.Or(derivedFacts)
	want := explicit
	want.PushNotifications, want.LegacyV03, want.DedupeAlways = true, true, true // false is unset
	if !reflect.DeepEqual(got, want) {
		t.Errorf("explicit card facts: %+v, want %+v", got, want)
	}
	if got := explicit.Or(Facts{}); !reflect.DeepEqual(got, explicit) {
		t.Errorf("no agent: %+v, want the card's own %+v", got, explicit)
	}
}
