package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// preload stores the tasks the ListTasks scenario pages through, straight
// into the SQLite file the gateway will open.
func (r *runner) preload(dataDir string) error {
	if !r.want("list") || len(r.listSizes) == 0 {
		return nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	st, err := store.OpenSQLite(filepath.Join(dataDir, "a2a.db"), store.SQLiteOptions{Durability: "normal"})
	if err != nil {
		return err
	}
	defer st.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range r.listSizes {
		fmt.Fprintf(os.Stderr, "preloading %d tasks\n", n)
		owner := fmt.Sprintf("bench-agent/lister%d", n) // "<owner_scope>/<principal>": the scope defaults to the card name
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := 0; w < 64; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < n; i += 64 {
					text := "hello"
					t := &a2a.Task{ID: fmt.Sprintf("%s-%08d", owner, i), ContextID: fmt.Sprintf("ctx-%d", i%1000),
						Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.Timestamp(base.Add(time.Duration(i) * time.Millisecond))},
						History: []a2a.Message{{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}}
					if err := st.PutTask(context.Background(), owner, t); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
		}
	}
	return nil
}

// getTask measures GetTask of one stored task.
func (r *runner) getTask() []result {
	c := newClient(1)
	resp, err := post(c, r.fast+"/", benchToken, rpcBody("SendMessage", sendParams("seed", "")))
	if err != nil {
		return []result{{name: "GetTask", extra: "error: " + err.Error()}}
	}
	var out struct {
		Result a2a.SendMessageResponse `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out.Result.Task == nil {
		return []result{{name: "GetTask", extra: "error: no task"}}
	}
	body := rpcBody("GetTask", map[string]any{"id": out.Result.Task.ID})
	res := r.drive("GetTask", r.concurrency, r.duration, noTurns(func(c *http.Client, _, _ int) error {
		return expect(c, r.fast+"/", benchToken, body, out.Result.Task.ID)
	}))
	res.ratioTo = []string{"baseline: Caddy respond"}
	return []result{res}
}

// listTasks measures one ListTasks page per preloaded owner size.
func (r *runner) listTasks() []result {
	var out []result
	body := rpcBody("ListTasks", map[string]any{"pageSize": 50, "historyLength": 0})
	for _, n := range r.listSizes {
		token := fmt.Sprintf("tok-%d", n)
		res := r.drive(fmt.Sprintf("ListTasks page of 50 (%d tasks)", n), 4, r.duration, noTurns(func(c *http.Client, _, _ int) error {
			return expect(c, r.fast+"/", token, body, `"nextPageToken":"`)
		}))
		out = append(out, res)
	}
	return out
}
