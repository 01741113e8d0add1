package agent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Pusher is the push runtime the service uses when push notifications are
// on (*push.Engine implements it): the URL policy, the key ring, and the
// wake-up of the delivery workers.
type Pusher interface {
	// CheckURL applies the callback URL policy (PUSH-2).
	CheckURL(ctx context.Context, rawURL string) error
	// URLRule is the fixed description of an acceptable callback URL: the
	// reason of the InvalidParamsError for a URL CheckURL refuses (PUSH-1).
	// It never says which rule matched, so the policy cannot be probed.
	URLRule() string
	// SealSecret encrypts a secret of a push config, bound to its task,
	// config id and field ("token", "credentials") (PUSH-3).
	SealSecret(plain, taskID, configID, field string) (string, error)
	// OpenSecret decrypts a value sealed by SealSecret for the same task,
	// config id and field.
	OpenSecret(sealed, taskID, configID, field string) (string, error)
	// Enqueued is told that n delivery jobs were committed.
	Enqueued(n int)
}

// Limits of a push config's fields.
const (
	maxPushSecret    = 4096
	maxPushScheme    = 64
	maxPushPage      = 100
	defaultPushPage  = 100
	pushTokenField   = "token"
	pushCredsField   = "credentials"
	pushInlinePrefix = "configuration.taskPushNotificationConfig."
)

// pushStore returns the push store when push is on.
func (s *Service) pushStore() (store.PushStore, bool) {
	if s.cfg.Push == nil {
		return nil, false
	}
	ps := s.st.caps().Push
	return ps, ps != nil
}

// pushEnabled reports whether push notifications are on for this service.
func (s *Service) pushEnabled() bool {
	_, ok := s.pushStore()
	return ok
}

// validatePushConfig checks a config before anything is stored (PUSH-1,
// PUSH-2); prefix names the fields in errors.
func (s *Service) validatePushConfig(ctx context.Context, c *a2a.TaskPushNotificationConfig, prefix string) error {
	if c.ID != "" {
		if err := checkID(prefix+"id", c.ID); err != nil {
			return err
		}
	}
	if strings.TrimSpace(c.URL) == "" || s.cfg.Push.CheckURL(ctx, c.URL) != nil {
		return a2a.ErrInvalidParams(prefix+"url", s.cfg.Push.URLRule())
	}
	if len(c.Token) > maxPushSecret || strings.ContainsAny(c.Token, "\r\n\x00") {
		return a2a.ErrInvalidParams(prefix+"token", "must be at most 4096 bytes with no control characters")
	}
	if a := c.Authentication; a != nil {
		if a.Scheme == "" {
			return a2a.ErrInvalidParams(prefix+"authentication.scheme", "is required")
		}
		if len(a.Scheme) > maxPushScheme || !isToken(a.Scheme) {
			return a2a.ErrInvalidParams(prefix+"authentication.scheme", "must be an HTTP authentication scheme such as Bearer or Basic")
		}
		if len(a.Credentials) > maxPushSecret || strings.ContainsAny(a.Credentials, "\r\n\x00") {
			return a2a.ErrInvalidParams(prefix+"authentication.credentials", "must be at most 4096 bytes with no control characters")
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	for _, c := range s {
		if c > 0x7e || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return false
		}
	}
	return s != ""
}

// savePushConfig seals the secrets and stores a validated config on taskID,
// within the cap of configs per task (PUSH-1); prefix names the fields in
// errors.
func (s *Service) savePushConfig(ctx context.Context, ps store.PushStore, owner, taskID string, c *a2a.TaskPushNotificationConfig, prefix string) (*a2a.TaskPushNotificationConfig, error) {
	id := c.ID
	if id == "" {
		id = taskID
	}
	rec := store.PushConfig{Owner: owner, TaskID: taskID, ID: id, URL: c.URL}
	var err error
	if rec.Token, err = s.cfg.Push.SealSecret(c.TokenToSeal(), taskID, id, pushTokenField); err != nil {
		s.cfg.Logger.Error("sealing push token", errField(err))
		return nil, a2a.ErrInternal()
	}
	if a := c.Authentication; a != nil {
		rec.Scheme = a.Scheme
		if rec.Credentials, err = s.cfg.Push.SealSecret(a.Credentials, taskID, id, pushCredsField); err != nil {
			s.cfg.Logger.Error("sealing push credentials", errField(err))
			return nil, a2a.ErrInternal()
		}
	}
	if err := ps.PutPushConfigMax(ctx, rec, s.cfg.MaxPushConfigsPerTask); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, a2a.ErrTaskNotFound(taskID)
		}
		if errors.Is(err, store.ErrPushConfigLimit) {
			return nil, a2a.ErrInvalidParams(prefix+"id", fmt.Sprintf("at most %d push notification configs per task", s.cfg.MaxPushConfigsPerTask))
		}
		s.cfg.Logger.Error("storing push config", errField(err))
		return nil, a2a.ErrInternal()
	}
	out := &a2a.TaskPushNotificationConfig{Tenant: c.Tenant, ID: id, TaskID: taskID, URL: c.URL, Token: c.Token}
	if c.Authentication != nil {
		a := *c.Authentication
		out.Authentication = &a
	}
	return out, nil
}

// reveal turns a stored config into its wire form. Reads return the token
// and credentials to the task's owner as they were given (the A2A 1.0
// proto has no masked form and the SDKs compare them); they are never
// logged.
func (s *Service) reveal(c store.PushConfig, tenant string) (a2a.TaskPushNotificationConfig, error) {
	out := a2a.TaskPushNotificationConfig{Tenant: tenant, ID: c.ID, TaskID: c.TaskID, URL: c.URL}
	var err error
	if out.Token, err = s.cfg.Push.OpenSecret(c.Token, c.TaskID, c.ID, pushTokenField); err != nil {
		return out, err
	}
	out.Token, out.Legacy = a2a.OpenedToken(out.Token)
	if c.Scheme != "" {
		creds, err := s.cfg.Push.OpenSecret(c.Credentials, c.TaskID, c.ID, pushCredsField)
		if err != nil {
			return out, err
		}
		out.Authentication = &a2a.AuthenticationInfo{Scheme: c.Scheme, Credentials: creds}
	}
	return out, nil
}

// pushScope returns the push store and the caller's owner id for an
// operation on the push configs of taskID (and on the config id, when
// given), after the checks each one makes first: push supported (PUSH-1),
// tenant and ids (scopeTask).
func (s *Service) pushScope(call Call, tenant *string, taskID string, id ...string) (store.PushStore, string, error) {
	ps, ok := s.pushStore()
	if !ok {
		return nil, "", ErrPushNotSupported()
	}
	if err := call.scopeTask(tenant, "taskId", taskID); err != nil {
		return nil, "", err
	}
	for _, v := range id {
		if err := checkID("id", v); err != nil {
			return nil, "", err
		}
	}
	return ps, s.owner(call.Principal), nil
}

// CreateTaskPushNotificationConfig registers (or, with a known id,
// replaces) a push config on one of the caller's tasks (PUSH-1).
func (s *Service) CreateTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	owner := s.owner(call.Principal)
	ps, ok := s.pushStore()
	if !ok {
		return nil, ErrPushNotSupported()
	}
	if req == nil {
		return nil, a2a.ErrInvalidParams("taskId", "is required")
	}
	if err := call.scopeTask(&req.Tenant, "taskId", req.TaskID); err != nil {
		return nil, err
	}
	if _, err := s.loadTask(ctx, owner, req.TaskID); err != nil {
		return nil, err
	}
	if err := s.validatePushConfig(ctx, req, ""); err != nil {
		return nil, err
	}
	return s.savePushConfig(ctx, ps, owner, req.TaskID, req, "")
}

// GetTaskPushNotificationConfig returns one config; an unknown one (or one
// of another principal's task) is TaskNotFoundError.
func (s *Service) GetTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	ps, owner, err := s.pushScope(call, &req.Tenant, req.TaskID, req.ID)
	if err != nil {
		return nil, err
	}
	c, err := ps.GetPushConfig(ctx, owner, req.TaskID, req.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(req.TaskID)
	}
	if err != nil {
		s.cfg.Logger.Error("reading push config", errField(err))
		return nil, a2a.ErrInternal()
	}
	out, err := s.reveal(*c, req.Tenant)
	if err != nil {
		s.cfg.Logger.Error("opening push config secrets", errField(err))
		return nil, a2a.ErrInternal()
	}
	return &out, nil
}

// ListTaskPushNotificationConfigs returns a page of a task's configs.
func (s *Service) ListTaskPushNotificationConfigs(ctx context.Context, call Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	ps, owner, err := s.pushScope(call, &req.Tenant, req.TaskID)
	if err != nil {
		return nil, err
	}
	if req.PageSize < 0 || req.PageSize > maxPushPage {
		return nil, a2a.ErrInvalidParams("pageSize", "must be between 1 and 100")
	}
	limit := int(req.PageSize)
	if limit == 0 {
		limit = defaultPushPage
	}
	after := ""
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil || !validID(string(b)) {
			return nil, a2a.ErrInvalidParams("pageToken", "is not a token returned by this server")
		}
		after = string(b)
	}
	if _, err := s.loadTask(ctx, owner, req.TaskID); err != nil {
		return nil, err
	}
	cs, err := ps.ListPushConfigs(ctx, owner, req.TaskID, after, limit+1)
	if err != nil {
		s.cfg.Logger.Error("listing push configs", errField(err))
		return nil, a2a.ErrInternal()
	}
	out := &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{}}
	if len(cs) > limit {
		cs = cs[:limit]
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(cs[limit-1].ID))
	}
	for _, c := range cs {
		w, err := s.reveal(c, req.Tenant)
		if err != nil {
			s.cfg.Logger.Error("opening push config secrets", errField(err))
			return nil, a2a.ErrInternal()
		}
		out.Configs = append(out.Configs, w)
	}
	return out, nil
}

// DeleteTaskPushNotificationConfig removes a config and drops its pending
// deliveries. Deleting an unknown config of the caller's task succeeds.
func (s *Service) DeleteTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.DeleteTaskPushNotificationConfigRequest) (*struct{}, error) {
	ps, owner, err := s.pushScope(call, &req.Tenant, req.TaskID, req.ID)
	if err != nil {
		return nil, err
	}
	if _, err := s.loadTask(ctx, owner, req.TaskID); err != nil {
		return nil, err
	}
	if err := ps.DeletePushConfig(ctx, owner, req.TaskID, req.ID); err != nil {
		s.cfg.Logger.Error("deleting push config", errField(err))
		return nil, a2a.ErrInternal()
	}
	return &struct{}{}, nil
}

// storeFinal stores a task's turn-ending state and, with push on, queues a
// delivery of ev to every push config of the task in the same transaction
// (PUSH-4, PUSH-5).
func (s *Service) storeFinal(ctx context.Context, owner string, t *a2a.Task, ev a2a.StreamResponse) error {
	ps, ok := s.pushStore()
	if !ok {
		return s.st.PutTask(ctx, owner, t)
	}
	payload, err := a2a.MarshalJSONValue(&ev)
	if err != nil {
		return err
	}
	began := time.Now()
	n, err := ps.PutTaskWithJobs(ctx, owner, t, payload)
	s.cfg.Metrics.storeOp(opPutTask, began)
	if err != nil {
		return err
	}
	s.cfg.Push.Enqueued(n)
	return nil
}
