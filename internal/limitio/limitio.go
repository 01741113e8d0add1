// Package limitio holds the bounded reads: whatever the gateway reads from
// a peer or a file goes through a size limit before it is held in memory.
package limitio

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// TooLargeError reports input beyond its limit.
type TooLargeError struct {
	// Limit is the limit in bytes that was exceeded.
	Limit int64
}

// Error implements error.
func (e *TooLargeError) Error() string { return fmt.Sprintf("larger than %d bytes", e.Limit) }

// IsTooLarge reports whether err is (or wraps) a *TooLargeError.
func IsTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// ReadAll reads r to its end, at most limit bytes. Input beyond limit is a
// *TooLargeError; at most limit+1 bytes are read to find out.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	n := limit
	if n < math.MaxInt64 {
		n++
	}
	b, err := io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return b, nil
}

// Reader yields the first bytes of a reader up to a limit. If the reader
// holds more, the read that would pass the limit returns the bytes up to
// it and the Reader's error — unlike io.LimitReader, a stream that is
// too long is never mistaken for one that ended.
type Reader struct {
	r       io.Reader
	left    int64 // bytes still allowed
	err     error // returned once r holds more than the limit
	tripped bool
}

// NewReader returns a Reader of at most limit bytes of r that fails with
// err (nil: a *TooLargeError) beyond them.
func NewReader(r io.Reader, limit int64, err error) *Reader {
	if err == nil {
		err = &TooLargeError{Limit: limit}
	}
	return &Reader{r: r, left: limit, err: err}
}

// Read implements io.Reader.
func (l *Reader) Read(p []byte) (int, error) {
	if l.tripped {
		return 0, l.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Ask for one byte beyond the limit to tell "ended" from "too long".
	if l.left < int64(len(p)) {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n = int(l.left)
		l.left = 0
		l.tripped = true
		return n, l.err
	}
	l.left -= int64(n)
	return n, err
}
