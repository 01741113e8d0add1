package client

import "errors"

// classify names the class of a client error the CLI maps to an exit
// code (CLI-2): "ok", "usage", "task", "interrupted", or "transport"
// (transport, auth and protocol errors, and anything unclassified).
func classify(err error) string {
	if err == nil {
		return "ok"
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return "transport"
	}
	switch e.Kind {
	case KindUsage:
		return "usage"
	case KindTask:
		return "task"
	case KindInterrupted:
		return "interrupted"
	}
	return "transport"
}
