package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Retention prunes old records in the background (OPS-5): tasks with their
// push configs, pending deliveries, stored input files and (once no task
// refers to them) artifact payloads; idle contexts; dead letters. A zero
// age keeps that kind of record.
type Retention struct {
	// Tasks is how long a task is kept after its last status change.
	Tasks time.Duration
	// Contexts is how long an idle context (workspace binding, backend
	// session state) is kept.
	Contexts time.Duration
	// DeadLetters is how long a dead push delivery is kept.
	DeadLetters time.Duration
	// Interval is the time between passes (for the caller that schedules
	// them). Default 10m.
	Interval time.Duration
	// Batch is how many records one write transaction removes. Default 500.
	Batch int
	// InputDir and ArtifactDir are the data directory's inputs/ and
	// artifacts/ (empty: no files to prune).
	InputDir, ArtifactDir string
	// Metrics counts what was pruned (caddy_a2a_pruned_total{kind}); nil:
	// nothing is counted.
	Metrics *Metrics
	// Logger gets one line per pass that removed something. Nil: none.
	Logger *zap.Logger
}

// Enabled reports whether any age is set.
func (r Retention) Enabled() bool { return r.Tasks > 0 || r.Contexts > 0 || r.DeadLetters > 0 }

// PruneResult is what one pass removed (or would remove).
type PruneResult struct {
	store.PruneResult
	// InputDirs and Artifacts are the input directories and artifact
	// payload files removed.
	InputDirs, Artifacts int
}

func (r Retention) logger() *zap.Logger {
	if r.Logger == nil {
		return zap.NewNop()
	}
	return r.Logger
}

// PruneOnce runs one pass as of now; dryRun counts without removing.
func (r Retention) PruneOnce(ctx context.Context, st store.Pruner, now time.Time, dryRun bool) (PruneResult, error) {
	var out PruneResult
	opts := store.PruneOptions{Batch: r.Batch, DryRun: dryRun}
	if r.Tasks > 0 {
		opts.TasksBefore = now.Add(-r.Tasks)
	}
	if r.Contexts > 0 {
		opts.ContextsBefore = now.Add(-r.Contexts)
	}
	if r.DeadLetters > 0 {
		opts.DeadBefore = now.Add(-r.DeadLetters)
	}
	if r.InputDir != "" {
		opts.OnTasks = func(ids []string) {
			for _, id := range ids {
				out.InputDirs += r.removeInputs(id, dryRun)
			}
		}
	}
	res, err := st.Prune(ctx, opts)
	out.PruneResult = res
	if err == nil && r.Tasks > 0 && r.ArtifactDir != "" {
		out.Artifacts, err = pruneArtifacts(ctx, r.ArtifactDir, now.Add(-r.Tasks), dryRun)
	}
	if !dryRun {
		r.Metrics.pruned("tasks", out.Tasks)
		r.Metrics.pruned("contexts", out.Contexts)
		r.Metrics.pruned("dead_letters", out.DeadLetters)
		r.Metrics.pruned("artifacts", out.Artifacts)
		r.Metrics.pruned("shared_artifacts", out.SharedArtifacts)
	}
	return out, err
}

// taskDirRe accepts the names the gateway gives task ids (no path
// separators or dots), so removing inputs/<id> never leaves InputDir.
var taskDirRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// removeInputs removes the stored input files of a task; it returns 1 when
// there was a directory.
func (r Retention) removeInputs(taskID string, dryRun bool) int {
	if !taskDirRe.MatchString(taskID) {
		return 0
	}
	dir := filepath.Join(r.InputDir, taskID)
	if _, err := os.Lstat(dir); err != nil {
		return 0
	}
	if !dryRun {
		if err := os.RemoveAll(dir); err != nil {
			r.logger().Warn("removing the input files of a pruned task", zap.String("task_id", taskID), zap.Error(errors.Unwrap(err)))
			return 0
		}
	}
	return 1
}

// pruneArtifacts removes artifact payloads not referenced since before:
// payloads are content-addressed and shared, and every turn that stores
// (or reuses) one sets its modification time, so a payload older than the
// task retention belongs only to tasks that are pruned.
func pruneArtifacts(ctx context.Context, dir string, before time.Time, dryRun bool) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !sha256Re.MatchString(d.Name()) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().Before(before) {
			return nil
		}
		if !dryRun {
			if err := os.Remove(p); err != nil {
				return nil
			}
		}
		n++
		return nil
	})
	return n, err
}
