package stdio

import (
	"bufio"
	"bytes"
	"errors"
)

// readLine reads one line of br without its line end ("\n" or "\r\n") and
// with surrounding white space trimmed. A line longer than max is read to
// its end but not kept: tooLong is set and b is nil. err is io.EOF after
// the last line (which may then be non-empty: a final line without a line
// end still counts) or the read error.
func readLine(br *bufio.Reader, max int64) (b []byte, tooLong bool, err error) {
	var buf []byte
	var n int64
	for {
		chunk, rerr := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			if n-lineEndLen(chunk, rerr) > max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, rerr
		}
		return bytes.TrimSpace(buf), false, rerr
	}
}

// lineEndLen is the length of the line end at the end of a chunk that
// ended the line (rerr nil), which does not count against the limit.
func lineEndLen(chunk []byte, rerr error) int64 {
	if rerr != nil {
		return 0
	}
	if bytes.HasSuffix(chunk, []byte("\r\n")) {
		return 2
	}
	return 1
}
