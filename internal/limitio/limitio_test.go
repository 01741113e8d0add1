package limitio

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll(t *testing.T) {
	b, err := ReadAll(strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	_, err = ReadAll(strings.NewReader("123456"), 5)
	if !IsTooLarge(err) || err.Error() != "larger than 5 bytes" {
		t.Fatalf("over the limit: %v", err)
	}
	boom := errors.New("boom")
	if _, err := ReadAll(iotest.ErrReader(boom), 5); err != boom {
		t.Fatalf("read error: %v", err)
	}
}

func TestReader(t *testing.T) {
	tooLong := errors.New("too long")
	for _, c := range []struct {
		in    string
		limit int64
		want  string
		err   error
	}{
		{"abc", 3, "abc", nil},
		{"abc", 5, "abc", nil},
		{"abcd", 3, "abc", tooLong},
		{"", 0, "", nil},
		{"a", 0, "", tooLong},
	} {
		for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader} {
			r := NewReader(wrap(strings.NewReader(c.in)), c.limit, tooLong)
			b, err := io.ReadAll(r)
			if string(b) != c.want || err != c.err {
				t.Errorf("%q limit %d: %q, %v; want %q, %v", c.in, c.limit, b, err, c.want, c.err)
			}
			if c.err != nil {
				if n, err := r.Read(make([]byte, 4)); n != 0 || err != tooLong {
					t.Errorf("%q: read after the limit: %d, %v", c.in, n, err)
				}
			}
		}
	}
	_, err := io.ReadAll(NewReader(strings.NewReader("xx"), 1, nil))
	if !IsTooLarge(err) {
		t.Errorf("default error %v", err)
	}
}
