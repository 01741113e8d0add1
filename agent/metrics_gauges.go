package agent

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// watch counts the live turns and open streams of h in the gauges, with a
// series for agent even while it has none. The counts live in the hub,
// so they stay right across config reloads.
func (m *Metrics) watch(h *Hub, agent string) {
	if m == nil || h == nil {
		return
	}
	m.mu.Lock()
	if m.hubs[h] == nil {
		m.hubs[h] = map[string]bool{}
	}
	m.hubs[h][agentLabel(agent)] = true
	m.mu.Unlock()
}

// collectGauges sends active_turns and open_streams by agent: a series
// for every watched agent (0 when idle) and for every agent a watched hub
// still runs turns or streams of (one a reload removed, say). The hubs
// are shared by the agents on one store; each run and counted stream
// carries the agent of the service that started it.
func (m *Metrics) collectGauges(ch chan<- prometheus.Metric) {
	turns, streams := map[string]int64{}, map[string]int64{}
	m.mu.Lock()
	for h, agents := range m.hubs {
		for a := range agents {
			turns[a] += 0
			streams[a] += 0
		}
		h.runs.Range(func(_, v any) bool {
			turns[agentLabel(v.(*run).agent)]++
			return true
		})
		h.streams.each(func(a string, n int64) { streams[a] += n })
	}
	m.mu.Unlock()
	for _, a := range sortedKeys(turns) {
		ch <- prometheus.MustNewConstMetric(m.activeTurns, prometheus.GaugeValue, float64(turns[a]), a)
	}
	for _, a := range sortedKeys(streams) {
		ch <- prometheus.MustNewConstMetric(m.openStreams, prometheus.GaugeValue, float64(streams[a]), a)
	}
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// streamCounts counts a hub's open streams by agent label (the
// open_streams gauge).
type streamCounts struct {
	m sync.Map // agent label → *atomic.Int64
}

// add adds d to the open streams of agent.
func (c *streamCounts) add(agent string, d int64) {
	v, ok := c.m.Load(agentLabel(agent))
	if !ok {
		v, _ = c.m.LoadOrStore(agentLabel(agent), new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(d)
}

// each calls f with every agent's open streams.
func (c *streamCounts) each(f func(agent string, n int64)) {
	c.m.Range(func(k, v any) bool {
		f(k.(string), v.(*atomic.Int64).Load())
		return true
	})
}

// Load returns the open streams of every agent.
func (c *streamCounts) Load() int64 {
	var n int64
	c.each(func(_ string, v int64) { n += v })
	return n
}
