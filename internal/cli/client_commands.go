package cli

import (
	"context"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func init() {
	registerSubcommand(addClientCommands)
}

// addClientCommands adds the client subcommands of `caddy a2a` (CLI-1):
// call, task get|list|cancel|subscribe, card get, push create|get|list|delete.
func addClientCommands(root *cobra.Command) {
	addCallCommand(root)
	addTaskCommands(taskCommand(root))
	cget := &cobra.Command{Use: "get URL", Short: "Print an agent's card (pretty; --raw as served)", RunE: runE(runCardGet)}
	addCommonFlags(cget)
	cget.Flags().Bool("raw", false, "print the card exactly as served")
	childCommand(root, "card", "Work with Agent Cards").AddCommand(cget)
	addPushCommands(childCommand(root, "push", "Manage push notification configs of tasks"))
}

// addCallCommand adds `caddy a2a call`.
func addCallCommand(root *cobra.Command) {
	call := &cobra.Command{
		Use:   "call URL [MESSAGE]",
		Short: "Send a message to an agent and print the answer (streams by default)",
		Long: `Discovers the Agent Card at URL (a base URL, or the card URL itself), picks
the first interface it speaks (JSONRPC, then HTTP+JSON) and sends MESSAGE (or
stdin). Text is printed as it arrives; on a terminal, tool progress, a spinner
and a summary go to stderr. --json prints one StreamResponse per line.`,
		Example: `  caddy a2a call http://127.0.0.1:8080 "list the files"
  caddy a2a call http://127.0.0.1:8080 --context CTX "and now?"
  git diff | caddy a2a call http://127.0.0.1:8080 --file notes.md --json`,
		RunE: runE(runCall),
	}
	addCommonFlags(call)
	f := call.Flags()
	f.Bool("no-stream", false, "use SendMessage and print the final answer")
	f.String("context", "", "context id to continue a conversation")
	f.String("task", "", "task id to continue (an input-required task)")
	f.String("cwd", "", "working directory for the agent (sent as metadata.<namespace>.cwd)")
	f.StringArray("file", nil, "attach a file as a part (repeatable; media type detected)")
	f.String("data", "", "attach a JSON value as a data part")
	f.Bool("cancel-on-interrupt", false, "cancel the task on Ctrl-C without asking")
	f.Int("history", -1, "history length of the returned task (-1: server default)")
	root.AddCommand(call)
}

// addTaskCommands adds `caddy a2a task get|list|cancel|subscribe`.
func addTaskCommands(task *cobra.Command) {
	get := &cobra.Command{Use: "get URL TASK_ID", Short: "Print a task", RunE: runE(runTaskGet)}
	addCommonFlags(get)
	get.Flags().Int("history", -1, "history length (-1: server default, 0: none)")
	list := &cobra.Command{Use: "list URL", Short: "List tasks (most recently updated first)", RunE: runE(runTaskList)}
	addCommonFlags(list)
	lf := list.Flags()
	lf.String("context", "", "only tasks of this context")
	lf.String("status", "", "only tasks in this state (e.g. working, input-required, TASK_STATE_COMPLETED)")
	lf.Int("page-size", 0, "tasks per page (1-100; 0: server default)")
	lf.String("page-token", "", "page token from a previous list")
	lf.Int("history", -1, "history length per task (-1: server default)")
	lf.Bool("artifacts", false, "include artifacts")
	cancel := &cobra.Command{Use: "cancel URL TASK_ID", Short: "Cancel a task", RunE: runE(runTaskCancel)}
	addCommonFlags(cancel)
	sub := &cobra.Command{Use: "subscribe URL TASK_ID", Short: "Follow a running task's events", RunE: runE(runTaskSubscribe)}
	addCommonFlags(sub)
	sub.Flags().Bool("cancel-on-interrupt", false, "cancel the task on Ctrl-C without asking")
	task.AddCommand(get, list, cancel, sub)
}

// addPushCommands adds `caddy a2a push create|get|list|delete`.
func addPushCommands(push *cobra.Command) {
	pcreate := &cobra.Command{Use: "create URL TASK_ID WEBHOOK_URL", Short: "Register a push config on a task", RunE: runE(runPushCreate)}
	addCommonFlags(pcreate)
	pf := pcreate.Flags()
	pf.String("id", "", "config id (default: assigned by the server; an existing id is replaced)")
	pf.String("push-token", "", "token the agent sends with each notification")
	pf.String("auth-scheme", "", "auth scheme the agent uses at the webhook (e.g. Bearer)")
	pf.String("auth-credentials", "", "credentials sent with --auth-scheme")
	pget := &cobra.Command{Use: "get URL TASK_ID CONFIG_ID", Short: "Print a push config", RunE: runE(runPushGet)}
	addCommonFlags(pget)
	plist := &cobra.Command{Use: "list URL TASK_ID", Short: "List a task's push configs", RunE: runE(runPushList)}
	addCommonFlags(plist)
	for _, c := range []*cobra.Command{pcreate, pget, plist} {
		c.Flags().Bool("show-secrets", false, "print the notification token and auth credentials (default: masked as "+SecretMask+")")
	}
	plist.Flags().Int("page-size", 0, "configs per page (0: server default)")
	plist.Flags().String("page-token", "", "page token from a previous list")
	pdel := &cobra.Command{Use: "delete URL TASK_ID CONFIG_ID", Short: "Delete a push config", RunE: runE(runPushDelete)}
	addCommonFlags(pdel)
	push.AddCommand(pcreate, pget, plist, pdel)
}

// stdio describes the command's terminal; TTY checks apply to real files.
func stdio(cmd *cobra.Command) Stdio {
	s := Stdio{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}
	isTTY := func(v any) bool {
		f, ok := v.(*os.File)
		return ok && term.IsTerminal(int(f.Fd()))
	}
	s.InTTY, s.OutTTY, s.ErrTTY = isTTY(s.In), isTTY(s.Out), isTTY(s.Err)
	s.Color = s.ErrTTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	return s
}

// withInterrupt routes Ctrl-C to the command while fn runs.
func withInterrupt(s *Stdio, fn func() error) error {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt)
	defer signal.Stop(ch)
	s.Interrupt = ch
	return fn()
}

func runCall(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 1, -1); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	f := cmd.Flags()
	co := CallOptions{Common: o}
	co.Message.Text = strings.Join(args[1:], " ")
	co.ReadStdin = len(args) == 1
	co.Message.ContextID, _ = f.GetString("context")
	co.Message.TaskID, _ = f.GetString("task")
	co.Message.Cwd, _ = f.GetString("cwd")
	co.Message.Files, _ = f.GetStringArray("file")
	co.Message.Data, _ = f.GetString("data")
	co.Message.Namespace = o.Namespace
	co.NoStream, _ = f.GetBool("no-stream")
	co.CancelOnInterrupt, _ = f.GetBool("cancel-on-interrupt")
	co.HistoryLength, _ = f.GetInt("history")
	s := stdio(cmd)
	return withInterrupt(&s, func() error { return Call(context.Background(), co, s) })
}

func runTaskGet(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	h, _ := cmd.Flags().GetInt("history")
	return TaskGet(context.Background(), o, args[1], h, stdio(cmd))
}

func runTaskList(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 1, 1); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	f := cmd.Flags()
	var req a2a.ListTasksRequest
	req.ContextID, _ = f.GetString("context")
	if st, _ := f.GetString("status"); st != "" {
		name := strings.ToUpper(strings.ReplaceAll(st, "-", "_"))
		if !strings.HasPrefix(name, "TASK_STATE_") {
			name = "TASK_STATE_" + name
		}
		s, err := a2a.ParseTaskState(name)
		if err != nil || s == a2a.TaskStateUnspecified {
			return usagef("--status %q: not a task state", st)
		}
		req.Status = s
	}
	if n, _ := f.GetInt("page-size"); n != 0 {
		if n < 1 || n > 100 {
			return usagef("--page-size must be between 1 and 100")
		}
		v := int32(n)
		req.PageSize = &v
	}
	req.PageToken, _ = f.GetString("page-token")
	if h, _ := f.GetInt("history"); h >= 0 {
		v := int32(h)
		req.HistoryLength = &v
	}
	if f.Changed("artifacts") {
		b, _ := f.GetBool("artifacts")
		req.IncludeArtifacts = &b
	}
	return TaskList(context.Background(), o, req, stdio(cmd))
}

func runTaskCancel(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return TaskCancel(context.Background(), o, args[1], stdio(cmd))
}

func runTaskSubscribe(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	coi, _ := cmd.Flags().GetBool("cancel-on-interrupt")
	s := stdio(cmd)
	return withInterrupt(&s, func() error { return TaskSubscribe(context.Background(), o, args[1], coi, s) })
}

func runCardGet(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 1, 1); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	raw, _ := cmd.Flags().GetBool("raw")
	return CardGet(context.Background(), o, raw, stdio(cmd))
}

func runPushCreate(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 3, 3); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	f := cmd.Flags()
	cfg := a2a.TaskPushNotificationConfig{TaskID: args[1], URL: args[2]}
	cfg.ID, _ = f.GetString("id")
	cfg.Token, _ = f.GetString("push-token")
	scheme, _ := f.GetString("auth-scheme")
	creds, _ := f.GetString("auth-credentials")
	if creds != "" && scheme == "" {
		return usagef("--auth-credentials needs --auth-scheme")
	}
	if scheme != "" {
		cfg.Authentication = &a2a.AuthenticationInfo{Scheme: scheme, Credentials: creds}
	}
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return usagef("WEBHOOK_URL %q: want an http(s) URL", cfg.URL)
	}
	return PushCreate(context.Background(), o, cfg, stdio(cmd))
}

func runPushGet(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 3, 3); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return PushGet(context.Background(), o, args[1], args[2], stdio(cmd))
}

func runPushList(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	n, _ := cmd.Flags().GetInt("page-size")
	if n < 0 {
		return usagef("--page-size must not be negative")
	}
	tok, _ := cmd.Flags().GetString("page-token")
	return PushList(context.Background(), o, args[1], n, tok, stdio(cmd))
}

func runPushDelete(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 3, 3); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return PushDelete(context.Background(), o, args[1], args[2], stdio(cmd))
}
