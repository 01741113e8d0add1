// Package tenantpeek finds the A2A tenant a request names by reading only
// the start of its body (TURN-10): the top-level params.tenant member of a
// JSON-RPC request, or the tenant field of the first message of a gRPC
// request. It reads before authentication, so it stops as soon as the
// tenant is known or cannot be, and never reads past what the caller's
// reader allows; the caller keeps what was read to replay it.
package tenantpeek

import (
	"encoding/json"
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxDepth bounds the nesting skipped while looking for params.tenant.
const maxDepth = 64

// errNo ends a scan that cannot find a tenant.
var errNo = errors.New("tenantpeek: no tenant")

// JSONRPC reads a JSON-RPC request object from r until its top-level
// params.tenant string is known (returned), or known to be absent or not a
// string, or r fails (""; the error of r, else nil). A batch, a value that
// is not an object and nesting deeper than 64 give "". Only the first
// params member and its first tenant member count (the service checks the
// tenant it is given again, TURN-10).
func JSONRPC(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return "", readErr(err)
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return "", readErr(err)
		}
		if key != "params" {
			if err := skipValue(dec); err != nil {
				return "", readErr(err)
			}
			continue
		}
		t, err := paramsTenant(dec)
		return t, readErr(err)
	}
	return "", nil
}

// paramsTenant reads the params value for its tenant member.
func paramsTenant(dec *json.Decoder) (string, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return "", err
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return "", err
		}
		if key != "tenant" {
			if err := skipValue(dec); err != nil {
				return "", err
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		s, _ := tok.(string)
		return s, nil
	}
	return "", nil
}

// expectDelim reads one token and fails unless it is the delimiter want.
func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return errNo
	}
	return nil
}

// objectKey reads the next member name of an object.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	k, ok := tok.(string)
	if !ok {
		return "", errNo
	}
	return k, nil
}

// skipValue reads one whole value (a scalar, or an object or array with
// everything in it, at most maxDepth deep).
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if depth++; depth > maxDepth {
					return errNo
				}
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// readErr is the error worth returning: the reader's, not the scan's own
// verdict or a syntax error (the body's handler answers those).
func readErr(err error) error {
	var syn *json.SyntaxError
	if err == nil || errors.Is(err, errNo) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syn) {
		return nil
	}
	var ut *json.UnmarshalTypeError
	if errors.As(err, &ut) {
		return nil
	}
	return err
}

// GRPCFieldOf is the field number of the tenant in the request message
// of an lf.a2a.v1.A2AService method, 0 for a method it does not know.
func GRPCFieldOf(method string) protowire.Number {
	switch method {
	case "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
		"SubscribeToTask", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
		"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard":
		return 1
	case "ListTaskPushNotificationConfigs":
		return 4
	}
	return 0
}

// GRPC reads the first length-prefixed message of a gRPC request body
// from r, at most limit bytes of it, and returns the string of its
// top-level field (the tenant; the first occurrence) or "" when the
// message is compressed, does not hold it within limit bytes or is
// malformed. It reads exactly the 5-byte prefix and at most
// min(length, limit) bytes, never past the first message, so a
// streaming client waiting for an answer does not stall it. The error is
// r's, other than an early end.
func GRPC(r io.Reader, field protowire.Number, limit int) (string, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", eofNil(err)
	}
	if hdr[0] != 0 || field == 0 {
		return "", nil // compressed: not read here
	}
	n := int(uint32(hdr[1])<<24 | uint32(hdr[2])<<16 | uint32(hdr[3])<<8 | uint32(hdr[4]))
	n = min(n, max(limit, 0))
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return "", eofNil(err)
	}
	return protoString(msg, field), nil
}

// protoString returns the first top-level bytes field num of msg as a
// string, "" when a field before it cannot be read whole.
func protoString(msg []byte, num protowire.Number) string {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return ""
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return ""
			}
			return string(v)
		}
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return ""
		}
		msg = msg[l:]
	}
	return ""
}

// eofNil drops an early end of the body.
func eofNil(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}
