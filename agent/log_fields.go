package agent

import "go.uber.org/zap"

// errField is the zap field of an error in a log line.
func errField(err error) zap.Field { return zap.Error(err) }
