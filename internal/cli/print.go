package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// SecretMask replaces a push notification token or credential that is set
// in the output of the push commands (unless Common.ShowSecrets).
const SecretMask = "…(set)"

// maskPush returns c with its token and credentials masked unless show.
func maskPush(c a2a.TaskPushNotificationConfig, show bool) a2a.TaskPushNotificationConfig {
	if show {
		return c
	}
	if c.Token != "" {
		c.Token = SecretMask
	}
	if c.Authentication != nil {
		a := *c.Authentication
		if a.Credentials != "" {
			a.Credentials = SecretMask
		}
		c.Authentication = &a
	}
	return c
}

// writeJSON writes v as one line (compact) or indented.
func writeJSON(w io.Writer, v any, compact bool) error {
	var b []byte
	var err error
	if compact {
		b, err = json.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		return transportErr("encoding output", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// TaskGet prints one task.
func TaskGet(ctx context.Context, o Common, id string, historyLength int, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	t, err := cl.GetTask(ctx, id, historyLength)
	if err != nil {
		return err
	}
	return writeJSON(sio.Out, t, o.JSON)
}

// TaskList prints tasks: a table, or the ListTasksResponse with --json.
func TaskList(ctx context.Context, o Common, req a2a.ListTasksRequest, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	resp, err := cl.ListTasks(ctx, &req)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(sio.Out, resp, true)
	}
	tw := tabwriter.NewWriter(sio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATE\tCONTEXT\tUPDATED")
	for _, t := range resp.Tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, StateName(t.Status.State), t.ContextID, orDash(t.Status.Timestamp))
	}
	if err := tw.Flush(); err != nil {
		return transportErr("writing output", err)
	}
	fmt.Fprintf(sio.Err, "%d of %d tasks\n", len(resp.Tasks), resp.TotalSize)
	if resp.NextPageToken != "" {
		fmt.Fprintf(sio.Err, "next page: --page-token %s\n", resp.NextPageToken)
	}
	return nil
}

// TaskCancel cancels a task and prints it (--json) or its new state.
func TaskCancel(ctx context.Context, o Common, id string, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	t, err := cl.CancelTask(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(sio.Out, t, true)
	}
	fmt.Fprintf(sio.Out, "task %s %s\n", t.ID, StateName(t.Status.State))
	return nil
}

// TaskSubscribe follows a task's events until it ends or waits for input.
func TaskSubscribe(ctx context.Context, o Common, id string, cancelOnInterrupt bool, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	r := NewRenderer(sio.Out, sio.Err, o.mode(sio), o.Namespace, sio.Color)
	return stream(ctx, cl, o, r, sio, cancelOnInterrupt, func(sctx context.Context, fn func(a2a.StreamResponse) error) error {
		return cl.SubscribeToTask(sctx, id, fn)
	})
}

// CardGet prints the agent card: indented, or exactly as served with raw.
func CardGet(ctx context.Context, o Common, raw bool, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	_, b, err := client.FetchCard(ctx, o.Target, o.Options)
	if err != nil {
		return err
	}
	if !o.Trust.Empty() {
		if err := client.VerifyCard(ctx, b, o.Trust); err != nil {
			return err
		}
	}
	if raw {
		_, err := sio.Out.Write(b)
		return err
	}
	var buf bytes.Buffer
	if o.JSON {
		err = json.Compact(&buf, b)
	} else {
		err = json.Indent(&buf, b, "", "  ")
	}
	if err != nil {
		return protocolf("bad agent card: %v", err)
	}
	buf.WriteByte('\n')
	_, err = sio.Out.Write(buf.Bytes())
	return err
}

// PushCreate registers a push config on a task and prints it (secrets
// masked unless o.ShowSecrets).
func PushCreate(ctx context.Context, o Common, cfg a2a.TaskPushNotificationConfig, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	out, err := cl.CreatePushConfig(ctx, &cfg)
	if err != nil {
		return err
	}
	return writeJSON(sio.Out, maskPush(*out, o.ShowSecrets), o.JSON)
}

// PushGet prints one push config (secrets masked unless o.ShowSecrets).
func PushGet(ctx context.Context, o Common, taskID, id string, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	out, err := cl.GetPushConfig(ctx, taskID, id)
	if err != nil {
		return err
	}
	return writeJSON(sio.Out, maskPush(*out, o.ShowSecrets), o.JSON)
}

// PushList prints the push configs of a task (secrets masked unless
// o.ShowSecrets).
func PushList(ctx context.Context, o Common, taskID string, pageSize int, pageToken string, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	out, err := cl.ListPushConfigs(ctx, taskID, pageSize, pageToken)
	if err != nil {
		return err
	}
	if out.Configs == nil {
		out.Configs = []a2a.TaskPushNotificationConfig{}
	}
	for i, c := range out.Configs {
		out.Configs[i] = maskPush(c, o.ShowSecrets)
	}
	return writeJSON(sio.Out, out, o.JSON)
}

// PushDelete deletes one push config.
func PushDelete(ctx context.Context, o Common, taskID, id string, sio Stdio) error {
	ctx, cancel := o.context(ctx)
	defer cancel()
	cl, err := o.connect(ctx)
	if err != nil {
		return err
	}
	if err := cl.DeletePushConfig(ctx, taskID, id); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(sio.Out, map[string]string{"deleted": id, "taskId": taskID}, true)
	}
	fmt.Fprintf(sio.Out, "deleted push config %s of task %s\n", id, taskID)
	return nil
}
