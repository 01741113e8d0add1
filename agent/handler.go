package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Handler is the A2A service as every binding sees it: the eleven A2A 1.0
// operations, the artifact downloads (TURN-7) and Refuse, each taking the
// Call the binding built. *Service implements it; NewHandler wraps a
// Service in the interceptors every binding needs (request metrics,
// version and extension negotiation, stream accounting), so a binding
// holds a Handler and nothing else and gets those by construction.
type Handler interface {
	// SendMessage runs a turn (RPC-1b).
	SendMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error)
	// SendStreamingMessage runs a turn and streams its events.
	SendStreamingMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (Stream, error)
	// GetTask returns a task of the caller.
	GetTask(ctx context.Context, call Call, req *a2a.GetTaskRequest) (*a2a.Task, error)
	// ListTasks lists the caller's tasks, a page at a time.
	ListTasks(ctx context.Context, call Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)
	// CancelTask cancels a task of the caller.
	CancelTask(ctx context.Context, call Call, req *a2a.CancelTaskRequest) (*a2a.Task, error)
	// SubscribeToTask streams the events of a task of the caller (RPC-11).
	SubscribeToTask(ctx context.Context, call Call, req *a2a.SubscribeToTaskRequest) (Stream, error)
	// CreateTaskPushNotificationConfig adds a push config to a task.
	CreateTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error)
	// GetTaskPushNotificationConfig returns one push config of a task.
	GetTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error)
	// ListTaskPushNotificationConfigs lists the push configs of a task.
	ListTaskPushNotificationConfigs(ctx context.Context, call Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error)
	// DeleteTaskPushNotificationConfig removes a push config of a task.
	DeleteTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.DeleteTaskPushNotificationConfigRequest) (*struct{}, error)
	// GetExtendedAgentCard returns the card for an authenticated caller.
	GetExtendedAgentCard(ctx context.Context, call Call) (*a2a.AgentCard, error)
	// OpenArtifact opens a stored artifact payload of the caller (TURN-7).
	OpenArtifact(ctx context.Context, call Call, ref ArtifactRef) (*ArtifactFile, error)
	// Invalid answers a call of method (as the caller named it) that the
	// binding could not turn into an operation: its request could not be
	// decoded, the method does not exist, it cannot be batched. The
	// version and extension rules apply first, so a client of another
	// version learns that rather than a detail of its request. It returns
	// the error to answer with (err, unless an interceptor answers first).
	Invalid(ctx context.Context, call Call, method string, err error) error
	// Refuse answers a message the carrier refused before reading it as a
	// call (not JSON, too large, a malformed envelope, a wrong
	// Content-Type or HTTP method, no credentials, abandoned): it is
	// counted under method ("" when it could not be read), and the
	// version rules do not apply. It returns the error to answer with.
	Refuse(ctx context.Context, call Call, method string, err error) error
}

// ArtifactRef names a stored artifact payload: an artifact of a task, and
// with PartSHA one of its stored raw parts (TURN-7).
type ArtifactRef struct {
	// TaskID is the task the artifact belongs to.
	TaskID string
	// ArtifactID is the artifact's id.
	ArtifactID string
	// PartSHA, when set, is the sha256 of a stored raw part of it.
	PartSHA string
}

// MethodOpenArtifact names the artifact downloads in an Invocation; it is
// not an A2A method, so it is neither counted nor negotiated.
const MethodOpenArtifact = "OpenArtifact"

var _ Handler = (*Service)(nil)

// Invalid implements Handler: the service answers with the binding's own
// error.
func (s *Service) Invalid(_ context.Context, _ Call, _ string, err error) error { return err }

// Refuse implements Handler: the service answers with the binding's own
// error.
func (s *Service) Refuse(_ context.Context, _ Call, _ string, err error) error { return err }
