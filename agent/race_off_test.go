//go:build !race

package agent

// raceEnabled: the race detector changes escape analysis, so allocation
// counts are asserted only without it.
const raceEnabled = false
