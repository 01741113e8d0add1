package a2a

import (
	"reflect"
	"testing"
)

// RPC-3: the A2A-Extensions values of every carrier parse alike: comma
// lists, trimmed, empty entries dropped, several values in order, nil when
// none.
func TestParseExtensions(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{""}, nil},
		{[]string{" , ,"}, nil},
		{[]string{"urn:a"}, []string{"urn:a"}},
		{[]string{"urn:a, ,urn:b "}, []string{"urn:a", "urn:b"}},
		{[]string{"urn:a", " urn:b,urn:c"}, []string{"urn:a", "urn:b", "urn:c"}},
	} {
		if got := ParseExtensions(tc.in...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseExtensions(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
