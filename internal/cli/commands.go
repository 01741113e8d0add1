package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/signal"
	"strings"
	"sync"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// Exit codes of `caddy a2a` (gateway.md CLI-2).
const (
	a2aExitOK        = 0 // success, including a task that waits for input
	a2aExitTask      = 1 // the task failed, was canceled or rejected
	a2aExitUsage     = 2 // bad flags or arguments
	a2aExitTransport = 3 // transport, auth or protocol error
)

var (
	a2aSubcommandsMu sync.Mutex
	a2aSubcommands   []func(root *cobra.Command)
)

// registerA2ASubcommand adds a function that attaches subcommands to the
// `caddy a2a` command. Call it from init() in the file that defines the
// subcommand. add receives the `a2a` command; use a2aChild to find or create
// an intermediate parent (`card`, `push`, `task`) so that files can add
// children to the same parent in any order:
//
//	func init() {
//		registerA2ASubcommand(func(root *cobra.Command) {
//			card := a2aChild(root, "card", "Work with Agent Cards")
//			card.AddCommand(&cobra.Command{Use: "validate FILE", RunE: a2aRunE(runCardValidate)})
//		})
//	}
func registerA2ASubcommand(add func(root *cobra.Command)) {
	a2aSubcommandsMu.Lock()
	defer a2aSubcommandsMu.Unlock()
	a2aSubcommands = append(a2aSubcommands, add)
}

// a2aChild returns parent's direct child command called name, creating a
// parent-only command with the given short help when there is none yet.
func a2aChild(parent *cobra.Command, name, short string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name {
			if c.Short == "" {
				c.Short = short
			}
			return c
		}
	}
	c := &cobra.Command{Use: name, Short: short, Args: a2aNoArgsForParent}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return a2aUsagef(cmd, "unknown subcommand %q of %q (see '%s --help')", args[0], name, cmd.CommandPath())
		}
		return a2aUsagef(cmd, "%q needs a subcommand (see '%s --help')", name, cmd.CommandPath())
	}
	parent.AddCommand(c)
	return c
}

// a2aNoArgsForParent lets a parent command's RunE report unknown subcommands
// itself, so they exit with the usage code.
func a2aNoArgsForParent(*cobra.Command, []string) error { return nil }

// a2aExitError is returned by a2aRunE-wrapped functions (or built with
// a2aExit) to choose the exit code; the message is printed as one line.
type a2aExitError struct {
	Code int
	Err  error
}

func (e *a2aExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *a2aExitError) Unwrap() error { return e.Err }

// a2aExit wraps err with an exit code.
func a2aExit(code int, err error) error { return &a2aExitError{Code: code, Err: err} }

// a2aUsagef prints a usage error line and returns the error that makes the
// process exit with code 2.
func a2aUsagef(cmd *cobra.Command, format string, args ...any) error {
	return a2aFinish(cmd, a2aExit(a2aExitUsage, fmt.Errorf(format, args...)))
}

// a2aExitCodeOf maps err to an exit code: an a2aExitError (anywhere in the
// chain) decides; an ExitCoder (the client package's errors) next; otherwise 3
// (transport), since unclassified failures of the client are I/O failures.
func a2aExitCodeOf(err error) int {
	if err == nil {
		return a2aExitOK
	}
	if ee, ok := errors.AsType[*a2aExitError](err); ok {
		return ee.Code
	}
	if ec, ok := errors.AsType[interface {
		error
		ExitCode() int
	}](err); ok {
		return ec.ExitCode()
	}
	return a2aExitTransport
}

// a2aRunE adapts fn into a cobra RunE that prints one clear error line on
// stderr ("caddy a2a: <message>") and exits with the code of the error
// (see a2aExitCodeOf). Use it for every leaf subcommand of `caddy a2a`.
func a2aRunE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return a2aFinish(cmd, fn(cmd, args))
	}
}

// a2aFinish prints err (if any) as one line and turns it into what Caddy's
// Main needs to exit with the right code. Caddy hides the text of errors with
// exit codes above 1 and formats the others as log lines, so the message is
// always printed here and the error returned to cobra is silenced.
func a2aFinish(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	code := a2aExitCodeOf(err)
	var silent *a2aExitError
	if !(errors.As(err, &silent) && silent.Err == nil) {
		fmt.Fprintf(a2aStderr(cmd), "caddy a2a: %s\n", oneLine(err.Error()))
	}
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	if r := cmd.Root(); r != nil {
		r.SilenceErrors = true
	}
	if code <= 1 {
		// Caddy's Main exits 1 for any error that is not its own exit error.
		return errors.New("failed")
	}
	// Only caddycmd can build the error type its Main reads the exit code
	// from; with a nil error it logs nothing.
	return caddycmd.WrapCommandFuncForCobra(func(caddycmd.Flags) (int, error) {
		return code, nil
	})(cmd, nil)
}

// a2aStderr is where error lines go: the command's configured error writer
// (tests set it) or os.Stderr.
func a2aStderr(cmd *cobra.Command) io.Writer {
	if cmd == nil {
		return os.Stderr
	}
	return cmd.ErrOrStderr()
}

// oneLine collapses a multi-line message to a single line.
func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

func init() {
	registerA2ASubcommand(addClientCommands)
}

// Build configures the `caddy a2a` command tree (CLI-1) on cmd: it runs
// every function registered with registerA2ASubcommand. caddymodule passes
// it to Caddy as the command's CobraFunc.
func Build(cmd *cobra.Command) {
	cmd.Args = a2aNoArgsForParent
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return a2aUsagef(c, "missing subcommand (see 'caddy a2a --help')")
		}
		return a2aUsagef(c, "unknown subcommand %q (see 'caddy a2a --help')", args[0])
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return a2aFinish(c, a2aExit(a2aExitUsage, err))
	})
	a2aSubcommandsMu.Lock()
	adds := append([]func(*cobra.Command){}, a2aSubcommands...)
	a2aSubcommandsMu.Unlock()
	for _, add := range adds {
		add(cmd)
	}
}

// addClientCommands adds the client subcommands of `caddy a2a` (CLI-1):
// call, task get|list|cancel|subscribe, card get, push create|get|list|delete.
func addClientCommands(root *cobra.Command) {
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
		RunE: a2aRunE(runCall),
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

	task := a2aChild(root, "task", "Inspect and control tasks")
	get := &cobra.Command{Use: "get URL TASK_ID", Short: "Print a task", RunE: a2aRunE(runTaskGet)}
	addCommonFlags(get)
	get.Flags().Int("history", -1, "history length (-1: server default, 0: none)")
	list := &cobra.Command{Use: "list URL", Short: "List tasks (most recently updated first)", RunE: a2aRunE(runTaskList)}
	addCommonFlags(list)
	lf := list.Flags()
	lf.String("context", "", "only tasks of this context")
	lf.String("status", "", "only tasks in this state (e.g. working, input-required, TASK_STATE_COMPLETED)")
	lf.Int("page-size", 0, "tasks per page (1-100; 0: server default)")
	lf.String("page-token", "", "page token from a previous list")
	lf.Int("history", -1, "history length per task (-1: server default)")
	lf.Bool("artifacts", false, "include artifacts")
	cancel := &cobra.Command{Use: "cancel URL TASK_ID", Short: "Cancel a task", RunE: a2aRunE(runTaskCancel)}
	addCommonFlags(cancel)
	sub := &cobra.Command{Use: "subscribe URL TASK_ID", Short: "Follow a running task's events", RunE: a2aRunE(runTaskSubscribe)}
	addCommonFlags(sub)
	sub.Flags().Bool("cancel-on-interrupt", false, "cancel the task on Ctrl-C without asking")
	task.AddCommand(get, list, cancel, sub)

	card := a2aChild(root, "card", "Work with Agent Cards")
	cget := &cobra.Command{Use: "get URL", Short: "Print an agent's card (pretty; --raw as served)", RunE: a2aRunE(runCardGet)}
	addCommonFlags(cget)
	cget.Flags().Bool("raw", false, "print the card exactly as served")
	card.AddCommand(cget)

	push := a2aChild(root, "push", "Manage push notification configs of tasks")
	pcreate := &cobra.Command{Use: "create URL TASK_ID WEBHOOK_URL", Short: "Register a push config on a task", RunE: a2aRunE(runPushCreate)}
	addCommonFlags(pcreate)
	pf := pcreate.Flags()
	pf.String("id", "", "config id (default: assigned by the server; an existing id is replaced)")
	pf.String("push-token", "", "token the agent sends with each notification")
	pf.String("auth-scheme", "", "auth scheme the agent uses at the webhook (e.g. Bearer)")
	pf.String("auth-credentials", "", "credentials sent with --auth-scheme")
	pget := &cobra.Command{Use: "get URL TASK_ID CONFIG_ID", Short: "Print a push config", RunE: a2aRunE(runPushGet)}
	addCommonFlags(pget)
	plist := &cobra.Command{Use: "list URL TASK_ID", Short: "List a task's push configs", RunE: a2aRunE(runPushList)}
	addCommonFlags(plist)
	for _, c := range []*cobra.Command{pcreate, pget, plist} {
		c.Flags().Bool("show-secrets", false, "print the notification token and auth credentials (default: masked as "+SecretMask+")")
	}
	plist.Flags().Int("page-size", 0, "configs per page (0: server default)")
	plist.Flags().String("page-token", "", "page token from a previous list")
	pdel := &cobra.Command{Use: "delete URL TASK_ID CONFIG_ID", Short: "Delete a push config", RunE: a2aRunE(runPushDelete)}
	addCommonFlags(pdel)
	push.AddCommand(pcreate, pget, plist, pdel)
}

// addCommonFlags adds the connection, auth and output flags.
func addCommonFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("token", "", "bearer token (default $"+"IACCODE_A2A_HTTP_TOKEN)")
	f.String("basic", "", "HTTP Basic credentials user:pass (default $IACCODE_A2A_BASIC_USERNAME/PASSWORD)")
	f.String("api-key", "", "API key (default $IACCODE_A2A_API_KEY)")
	f.String("api-key-header", "", "API key header (default $IACCODE_A2A_API_KEY_HEADER, else X-API-Key)")
	f.StringArrayP("header", "H", nil, "extra request header 'Name: value' (repeatable)")
	f.Duration("timeout", 0, "give up after this long (e.g. 30s; 0: no limit)")
	f.Bool("json", false, "machine output: one JSON document per line")
	f.String("binding", "", "force the protocol binding: jsonrpc or rest (default: the card's first)")
	f.String("namespace", client.DefaultNamespace, "metadata namespace of the gateway")
	f.StringArray("verify-key", nil, "PEM public key that must verify the card signature (repeatable)")
	f.String("jwks", "", "JWKS URL or file whose keys must verify the card signature")
}

// a2aArgs checks the positional argument count.
func a2aArgs(cmd *cobra.Command, args []string, min, max int) error {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return client.Usagef("usage: %s", cmd.UseLine())
	}
	return nil
}

// commonFromFlags reads the shared flags.
func commonFromFlags(cmd *cobra.Command, target string) (Common, error) {
	f := cmd.Flags()
	var o Common
	o.Target = target
	tok, _ := f.GetString("token")
	basic, _ := f.GetString("basic")
	key, _ := f.GetString("api-key")
	keyHeader, _ := f.GetString("api-key-header")
	if tok != "" && basic != "" {
		return o, client.Usagef("--token and --basic both set the Authorization header; give one")
	}
	a := client.Auth{Token: tok, APIKey: key, APIKeyHeader: keyHeader}
	if basic != "" {
		u, p, ok := strings.Cut(basic, ":")
		if !ok || u == "" {
			return o, client.Usagef("--basic wants user:pass")
		}
		a.BasicUser, a.BasicPassword = u, p
	}
	o.Auth = client.AuthFromEnv(a, os.Getenv)
	hdrs, _ := f.GetStringArray("header")
	o.Headers = http.Header{}
	for _, h := range hdrs {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return o, client.Usagef("--header %q: want 'Name: value'", k)
		}
		o.Headers.Add(textproto.CanonicalMIMEHeaderKey(k), strings.TrimSpace(v))
	}
	o.Timeout, _ = f.GetDuration("timeout")
	if o.Timeout < 0 {
		return o, client.Usagef("--timeout must not be negative")
	}
	o.JSON, _ = f.GetBool("json")
	if f.Lookup("show-secrets") != nil {
		o.ShowSecrets, _ = f.GetBool("show-secrets")
	}
	o.Binding, _ = f.GetString("binding")
	switch strings.ToLower(o.Binding) {
	case "", client.BindingJSONRPC, client.BindingREST, "http+json":
	default:
		return o, client.Usagef("--binding %q: want jsonrpc or rest", o.Binding)
	}
	o.Namespace, _ = f.GetString("namespace")
	o.VerifyKeys, _ = f.GetStringArray("verify-key")
	o.JWKS, _ = f.GetString("jwks")
	o.UserAgent = "caddy-a2a-client/1.0"
	if _, err := client.CardURL(target); err != nil {
		return o, err
	}
	return o, nil
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
	if err := a2aArgs(cmd, args, 1, -1); err != nil {
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
	if err := a2aArgs(cmd, args, 2, 2); err != nil {
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
	if err := a2aArgs(cmd, args, 1, 1); err != nil {
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
			return client.Usagef("--status %q: not a task state", st)
		}
		req.Status = s
	}
	if n, _ := f.GetInt("page-size"); n != 0 {
		if n < 1 || n > 100 {
			return client.Usagef("--page-size must be between 1 and 100")
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
	if err := a2aArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return TaskCancel(context.Background(), o, args[1], stdio(cmd))
}

func runTaskSubscribe(cmd *cobra.Command, args []string) error {
	if err := a2aArgs(cmd, args, 2, 2); err != nil {
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
	if err := a2aArgs(cmd, args, 1, 1); err != nil {
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
	if err := a2aArgs(cmd, args, 3, 3); err != nil {
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
		return client.Usagef("--auth-credentials needs --auth-scheme")
	}
	if scheme != "" {
		cfg.Authentication = &a2a.AuthenticationInfo{Scheme: scheme, Credentials: creds}
	}
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return client.Usagef("WEBHOOK_URL %q: want an http(s) URL", cfg.URL)
	}
	return PushCreate(context.Background(), o, cfg, stdio(cmd))
}

func runPushGet(cmd *cobra.Command, args []string) error {
	if err := a2aArgs(cmd, args, 3, 3); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return PushGet(context.Background(), o, args[1], args[2], stdio(cmd))
}

func runPushList(cmd *cobra.Command, args []string) error {
	if err := a2aArgs(cmd, args, 2, 2); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	n, _ := cmd.Flags().GetInt("page-size")
	if n < 0 {
		return client.Usagef("--page-size must not be negative")
	}
	tok, _ := cmd.Flags().GetString("page-token")
	return PushList(context.Background(), o, args[1], n, tok, stdio(cmd))
}

func runPushDelete(cmd *cobra.Command, args []string) error {
	if err := a2aArgs(cmd, args, 3, 3); err != nil {
		return err
	}
	o, err := commonFromFlags(cmd, args[0])
	if err != nil {
		return err
	}
	return PushDelete(context.Background(), o, args[1], args[2], stdio(cmd))
}
