package harness

import (
	"os"
	"strconv"
	"strings"
)

// RaceEnv is the environment variable that makes Main build the gateway
// with the race detector (A2A_E2E_RACE=1; `make test-e2e-race`).
const RaceEnv = "A2A_E2E_RACE"

// raceReport is the line the race detector prints for each data race.
const raceReport = "WARNING: DATA RACE"

// raceExitCode is the exit status GORACE gives a race-built gateway that
// saw a race (halt_on_error stops it at the first one).
const raceExitCode = 66

// Race reports whether the gateway binary is (to be) built with -race.
func Race() bool { return os.Getenv(RaceEnv) == "1" }

// raceEnv returns the GORACE setting for a gateway process when the
// binary is race-built: stop at the first race with exit status 66, so
// the report is the last thing in the output and cannot scroll by.
func raceEnv() []string {
	if !Race() {
		return nil
	}
	return []string{"GORACE=halt_on_error=1 exitcode=" + strconv.Itoa(raceExitCode)}
}

// raceFound reports whether out holds a race detector report.
func raceFound(out string) bool { return strings.Contains(out, raceReport) }
