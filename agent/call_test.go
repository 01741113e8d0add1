package agent

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TestServiceAppliesOwnerScope: the owner scope (AUTH-4) is applied by the
// service itself, so a caller of the transport-neutral API (any binding)
// reaches only the tasks of its principal within its endpoint's scope.
func TestServiceAppliesOwnerScope(t *testing.T) {
	hub := mustHub(t)
	a := NewService(hub, Config{OwnerScope: "a"})
	b := NewService(hub, Config{OwnerScope: "b"})
	ctx := context.Background()
	res, err := a.SendMessage(ctx, Call{Principal: "alice"}, sendReq(msg("hi")))
	if err != nil || res.Task == nil {
		t.Fatalf("SendMessage: %v %+v", err, res)
	}
	id := res.Task.ID
	if _, err := a.GetTask(ctx, Call{Principal: "alice"}, &a2a.GetTaskRequest{ID: id}); err != nil {
		t.Errorf("owner's GetTask: %v", err)
	}
	for name, tc := range map[string]struct {
		svc  *Service
		call Call
	}{
		"same principal, other scope":  {b, Call{Principal: "alice"}},
		"other principal":              {a, Call{Principal: "bob"}},
		"scoped owner id as principal": {b, Call{Principal: "a/alice"}},
	} {
		_, err := tc.svc.GetTask(ctx, tc.call, &a2a.GetTaskRequest{ID: id})
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotFound {
			t.Errorf("%s: GetTask = %v, want TaskNotFoundError", name, err)
		}
		if _, err := tc.svc.OpenArtifact(ctx, tc.call, ArtifactRef{TaskID: id, ArtifactID: "a1"}); err == nil {
			t.Errorf("%s: OpenArtifact succeeded", name)
		}
	}
	list, err := b.ListTasks(ctx, Call{Principal: "alice"}, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 0 {
		t.Errorf("other scope's ListTasks = %v, %d tasks; want none", err, len(list.Tasks))
	}
}

// TestCallTenant: a Call's tenant (the REST path prefix) takes precedence
// over the request's, and any tenant is one this site does not serve
// (TURN-10).
func TestCallTenant(t *testing.T) {
	e := newTestEnv(t, Config{})
	ctx := context.Background()
	res, err := e.svc.SendMessage(ctx, Call{}, sendReq(msg("hi")))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	if _, err := e.svc.GetTask(ctx, Call{}, &a2a.GetTaskRequest{ID: id}); err != nil {
		t.Fatalf("GetTask without tenant: %v", err)
	}
	for _, tc := range []struct {
		call Call
		req  string
	}{{Call{Tenant: "t1"}, ""}, {Call{}, "t1"}, {Call{Tenant: "t1"}, "t2"}} {
		req := &a2a.GetTaskRequest{Tenant: tc.req, ID: id}
		_, err := e.svc.GetTask(ctx, tc.call, req)
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotFound {
			t.Errorf("tenant %q/%q: GetTask = %v, want TaskNotFoundError", tc.call.Tenant, tc.req, err)
		}
	}
	if _, err := e.svc.GetExtendedAgentCard(ctx, Call{Tenant: "t1"}); err == nil {
		t.Error("GetExtendedAgentCard with a tenant succeeded")
	}
}

// TestNegotiate covers RPC-2 and RPC-3 on the transport-neutral API.
func TestNegotiate(t *testing.T) {
	svc := NewService(mustHub(t), Config{Extensions: []string{"urn:x", "urn:y"}, RequiredExtensions: []string{"urn:r"}})
	for _, v := range []string{"", "0.3", "2.0", "1.1", "1"} {
		_, err := svc.negotiate(Call{Version: v, Extensions: []string{"urn:r"}})
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Code != a2a.CodeVersionNotSupported {
			t.Errorf("version %q: %v, want VersionNotSupportedError", v, err)
		}
	}
	_, err := svc.negotiate(Call{Version: "1.0", Extensions: []string{"urn:x"}})
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeExtensionSupportRequired {
		t.Errorf("missing required extension: %v", err)
	}
	active, err := svc.negotiate(Call{Version: " 1.0.2 ", Extensions: []string{"urn:r", "urn:unknown", "urn:y"}})
	if err != nil || !slices.Equal(active, []string{"urn:y", "urn:r"}) {
		t.Errorf("Negotiate = %v, %v; want [urn:y urn:r]", active, err)
	}
}

func mustHub(t *testing.T) *Hub {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close() })
	return hub
}
