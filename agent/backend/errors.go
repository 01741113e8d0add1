package backend

// ProtocolError is backend output the gateway cannot use: a line that is
// not a JSON event, an event that breaks the turn-event protocol (content
// after a message event, an artifact or message part that is not a valid
// A2A part, an invalid artifact id or payload), or output over a limit
// (Appendix A). The turn fails (TURN-8) and a blocking SendMessage answers
// InvalidAgentResponseError (-32006). Err is logged, never shown to the
// client.
type ProtocolError struct {
	// Err describes the violation, for the log only.
	Err error
}

// Error describes the violation.
func (e *ProtocolError) Error() string { return "turn-event protocol: " + e.Err.Error() }

// Unwrap returns Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

// TurnError is an error a backend returns to say how its turn failed
// (TURN-8): Kind is ErrorKindTransient, ErrorKindAuth or ErrorKindInternal.
// Err is logged, never shown to the client.
type TurnError struct {
	// Kind is ErrorKindTransient, ErrorKindAuth or ErrorKindInternal.
	Kind string
	// Err is the cause, for the log only.
	Err error
}

// Error returns the kind and the cause.
func (e *TurnError) Error() string {
	if e.Err == nil {
		return e.Kind + " turn failure"
	}
	return e.Kind + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *TurnError) Unwrap() error { return e.Err }
