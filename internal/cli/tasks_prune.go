package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// `caddy a2a tasks prune` (also `task prune`, OPS-5): one retention pass over a data directory
// that no gateway holds. A running gateway prunes itself with the a2a
// app's retention block; the command takes the directory's lock, so it
// refuses to run next to one.
func init() {
	registerSubcommand(func(root *cobra.Command) {
		tasks := taskCommand(root) // `tasks prune` and `task prune`
		prune := &cobra.Command{
			Use:   "prune --older-than DURATION",
			Short: "Remove old tasks (and their push configs, inputs, unreferenced artifacts), idle contexts and dead letters",
			Long: "Runs one retention pass (OPS-5) over a data directory no gateway is using (it takes the directory's lock).\n" +
				"A running gateway prunes in the background with `retention { … }` in the global a2a options instead.\n" +
				"Durations take Caddy's units plus d (days): 30d, 12h.",
			Args: cobra.NoArgs,
			RunE: runE(runTasksPrune),
		}
		f := prune.Flags()
		def := os.Getenv("A2A_DATA_DIR")
		if def == "" {
			def = "./data"
		}
		f.String("data-dir", def, "the a2a data_dir; default $A2A_DATA_DIR or ./data")
		f.String("older-than", "", "remove tasks whose last status change is older than this (required)")
		f.String("contexts", "", "also remove contexts idle for longer than this")
		f.String("dead-letters", "", "also remove dead push deliveries older than this")
		f.Bool("dry-run", false, "count what would be removed; remove nothing")
		tasks.AddCommand(prune)
	})
}

// pruneAge parses an age flag ("" = not set).
func pruneAge(cmd *cobra.Command, name string) (time.Duration, error) {
	v, _ := cmd.Flags().GetString(name)
	if v == "" {
		return 0, nil
	}
	d, err := currentHost().ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usagef("--%s: invalid duration %q (e.g. 30d, 12h)", name, v)
	}
	return d, nil
}

func runTasksPrune(cmd *cobra.Command, _ []string) error {
	r := agent.Retention{}
	var err error
	if r.Tasks, err = pruneAge(cmd, "older-than"); err != nil {
		return err
	}
	if r.Tasks == 0 {
		return usagef("--older-than is required (e.g. --older-than 30d)")
	}
	if r.Contexts, err = pruneAge(cmd, "contexts"); err != nil {
		return err
	}
	if r.DeadLetters, err = pruneAge(cmd, "dead-letters"); err != nil {
		return err
	}
	dir, _ := cmd.Flags().GetString("data-dir")
	dryRun, _ := cmd.Flags().GetBool("dry-run")
	if _, err := os.Stat(filepath.Join(dir, "a2a.db")); err != nil {
		return usagef("no a2a.db in the data directory (see --data-dir)")
	}
	lock, err := store.LockDir(dir)
	if errors.Is(err, store.ErrDirLocked) {
		return exitWith(ExitTransport, errors.New("the data directory is in use by a running gateway: prune there with the retention block of the a2a app, or stop it first"))
	}
	if err != nil {
		return exitWith(ExitTransport, err)
	}
	defer lock.Close()
	st, err := store.OpenSQLite(filepath.Join(dir, "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		return exitWith(ExitTransport, err)
	}
	defer st.Close()
	r.InputDir, r.ArtifactDir = filepath.Join(dir, "inputs"), filepath.Join(dir, "artifacts")
	res, err := r.PruneOnce(context.Background(), st, time.Now(), dryRun)
	if err != nil {
		return exitWith(ExitTransport, fmt.Errorf("pruning: %w", err))
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %d tasks, %d contexts, %d dead letters, %d input directories, %d artifact files\n",
		verb, res.Tasks, res.Contexts, res.DeadLetters, res.InputDirs, res.Artifacts)
	return nil
}
