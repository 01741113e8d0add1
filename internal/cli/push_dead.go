package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// The queue names of the push config's queue option (PUSH-7).
const (
	pushQueueLocal = push.QueueLocal
	pushQueueRedis = push.QueueRedis
)

// `caddy a2a push dead list|requeue` (PUSH-7): inspect and replay the dead
// letters of either queue. The gateway may keep running meanwhile.
func init() {
	registerSubcommand(func(root *cobra.Command) {
		p := childCommand(root, "push", "Manage push notification configs of tasks")
		dead := childCommand(p, "dead", "Inspect and replay dead push deliveries")
		list := &cobra.Command{Use: "list", Short: "List dead push deliveries, oldest first", Args: cobra.NoArgs, RunE: runE(runPushDeadList)}
		pushQueueFlags(list)
		list.Flags().Int("limit", 100, "at most this many")
		list.Flags().Bool("json", false, "one JSON object per line")
		requeue := &cobra.Command{Use: "requeue DELIVERY_ID | --all", Short: "Queue dead deliveries again (zero attempts, same delivery id)", Args: cobra.MaximumNArgs(1), RunE: runE(runPushDeadRequeue)}
		pushQueueFlags(requeue)
		requeue.Flags().Bool("all", false, "requeue every dead delivery")
		dead.AddCommand(list, requeue)
	})
}

func pushQueueFlags(c *cobra.Command) {
	f := c.Flags()
	def := os.Getenv("A2A_DATA_DIR")
	if def == "" {
		def = "./data"
	}
	f.String("data-dir", def, "the a2a data_dir (local-file queue); default $A2A_DATA_DIR or ./data")
	f.String("queue", pushQueueLocal, "local-file or redis-streams")
	f.String("redis-url", os.Getenv("A2A_PUSH_REDIS_URL"), "Redis URL (redis-streams); default $A2A_PUSH_REDIS_URL")
	f.String("stream", push.DefaultStream, "job stream (redis-streams)")
	f.String("dead-stream", push.DefaultDeadStream, "dead-letter stream (redis-streams)")
	f.String("store-redis", "", "with local-file: the outbox of a `store redis` deployment at this Redis URL instead of --data-dir's SQLite store")
	f.String("key-prefix", store.DefaultRedisKeyPrefix, "with --store-redis: the store's key_prefix")
}

// openPushQueueCLI opens the queue the flags name; close releases it.
func openPushQueueCLI(cmd *cobra.Command) (q push.Queue, closeFn func(), err error) {
	f := cmd.Flags()
	kind, _ := f.GetString("queue")
	switch kind {
	case pushQueueLocal:
		if u, _ := f.GetString("store-redis"); u != "" {
			prefix, _ := f.GetString("key-prefix")
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			st, err := store.OpenRedis(ctx, store.RedisOptions{URLs: []string{u}, KeyPrefix: prefix, NoInstance: true})
			if err != nil {
				return nil, nil, exitWith(ExitTransport, err)
			}
			return push.NewLocalQueue(st, 0), func() { _ = st.Close() }, nil
		}
		dir, _ := f.GetString("data-dir")
		path := filepath.Join(dir, "a2a.db")
		if _, err := os.Stat(path); err != nil {
			return nil, nil, usagef("no a2a.db in the data directory (see --data-dir)")
		}
		st, err := store.OpenSQLite(path, store.SQLiteOptions{})
		if err != nil {
			return nil, nil, exitWith(ExitTransport, err)
		}
		return push.NewLocalQueue(st, 0), func() { _ = st.Close() }, nil
	case pushQueueRedis:
		u, _ := f.GetString("redis-url")
		if u == "" {
			return nil, nil, usagef("--redis-url is required with --queue redis-streams")
		}
		stream, _ := f.GetString("stream")
		deadStream, _ := f.GetString("dead-stream")
		rq, err := push.OpenRedisQueue(push.RedisOptions{URL: u, Stream: stream, DeadStream: deadStream, Consumer: "cli"}, nil, nil)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		return rq, func() { _ = rq.Close() }, nil
	}
	return nil, nil, usagef("--queue must be %s or %s", pushQueueLocal, pushQueueRedis)
}

func runPushDeadList(cmd *cobra.Command, _ []string) error {
	q, closeFn, err := openPushQueueCLI(cmd)
	if err != nil {
		return err
	}
	defer closeFn()
	limit, _ := cmd.Flags().GetInt("limit")
	asJSON, _ := cmd.Flags().GetBool("json")
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	ds, err := q.ListDead(ctx, limit)
	if err != nil {
		return exitWith(ExitTransport, fmt.Errorf("listing dead push deliveries: %w", err))
	}
	out := cmd.OutOrStdout()
	if len(ds) == 0 && !asJSON {
		// On stderr: stdout stays empty for scripts that count lines.
		fmt.Fprintln(cmd.ErrOrStderr(), "no dead letters")
	}
	for _, d := range ds {
		host := ""
		if u, err := url.Parse(d.URL); err == nil {
			host = u.Host
		}
		if asJSON {
			// Never the sealed secrets or the payload: ids, host, counts, reason.
			b, _ := json.Marshal(map[string]any{
				"deliveryId": d.ID, "taskId": d.TaskID, "configId": d.ConfigID, "host": host,
				"attempts": d.Attempts, "reason": d.Reason, "deadAt": d.DeadAt.UTC().Format(time.RFC3339),
			})
			fmt.Fprintln(out, string(b))
			continue
		}
		fmt.Fprintf(out, "%s\t%s\t%s\t%s\tattempts=%d\t%s\t%s\n", d.ID, d.TaskID, d.ConfigID, host, d.Attempts,
			d.DeadAt.UTC().Format(time.RFC3339), strconv.Quote(d.Reason))
	}
	return nil
}

func runPushDeadRequeue(cmd *cobra.Command, args []string) error {
	all, _ := cmd.Flags().GetBool("all")
	if all == (len(args) == 1) {
		return usagef("give either a delivery id or --all")
	}
	id := ""
	if len(args) == 1 {
		id = args[0]
		if id == "" {
			return usagef("empty delivery id")
		}
	}
	q, closeFn, err := openPushQueueCLI(cmd)
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, cancel := context.WithTimeout(cmd.Context(), 60*time.Second)
	defer cancel()
	n, err := q.Requeue(ctx, id)
	if err != nil {
		return exitWith(ExitTransport, fmt.Errorf("requeueing dead push deliveries: %w", err))
	}
	if id != "" && n == 0 {
		return exitWith(ExitTask, fmt.Errorf("no dead delivery %q", id))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "requeued %d\n", n)
	return nil
}
