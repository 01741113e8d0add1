package jcs

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"
)

// RFC 8785 Appendix B: IEEE 754 bit patterns and their ES6 serialisation.
func TestFormatNumberRFC8785AppendixB(t *testing.T) {
	vectors := []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, v := range vectors {
		u, err := strconv.ParseUint(v.bits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FormatNumber(math.Float64frombits(u))
		if err != nil {
			t.Errorf("%s: %v", v.bits, err)
			continue
		}
		if got != v.want {
			t.Errorf("%s: got %s, want %s", v.bits, got, v.want)
		}
	}
	for _, bits := range []string{"7fffffffffffffff", "7ff0000000000000", "fff0000000000000"} {
		u, _ := strconv.ParseUint(bits, 16, 64)
		if _, err := FormatNumber(math.Float64frombits(u)); err == nil {
			t.Errorf("%s: NaN/Infinity accepted", bits)
		}
	}
}

// RFC 8785 §3.2.2 (the main example) and §3.2.3 (sorting).
func TestCanonicalizeRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"rfc 3.2.2", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"rfc 3.2.3 sorting", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"דּ\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"nested and whitespace", " { \"b\" : [ 1 , { \"z\":1,\"a\":2 } ], \"a\" : {} } ", `{"a":{},"b":[1,{"a":2,"z":1}]}`},
		{"escapes", `"\u0000\u001f\u007f\u2028<>&"`, "\"\\u0000\\u001f\u007f\u2028<>&\""},
		{"integers", `[0, -0, 1, -1, 100, 1e2, 123456789012345680000]`, `[0,0,1,-1,100,100,123456789012345680000]`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// The RFC's UTF-8 hex dump of the §3.2.2 example output.
func TestCanonicalizeRFC8785Bytes(t *testing.T) {
	in := `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`
	want := "7b226c69746572616c73223a5b6e756c6c2c747275652c66616c73655d2c226e756d62657273223a5b3333333333333333332e333333333333332c31652b33302c342e352c302e3030322c31652d32375d2c22737472696e67223a22e282ac245c75303030665c6e4127425c225c5c5c5c5c222f227d"
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != want {
		t.Errorf("got %x\nwant %s", got, want)
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":2}`,
		`[1,2`,
		`{"a":1} x`,
		`1e400`,
		"\"\xff\"",
		``,
		`{"a":}`,
	} {
		if out, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("%q accepted as %q", in, out)
		}
	}
	deep := make([]byte, 0, 2*MaxDepth+4)
	for i := 0; i <= MaxDepth; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i <= MaxDepth; i++ {
		deep = append(deep, ']')
	}
	if _, err := Canonicalize(deep); err == nil {
		t.Error("over-deep nesting accepted")
	}
}

func TestMarshalGoValues(t *testing.T) {
	got, err := Marshal(map[string]any{"b": []string{"x"}, "a": 1.5, "c": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"a":1.5,"b":["x"],"c":{}}` {
		t.Errorf("got %s", got)
	}
}

// FuzzCanonicalize checks that Canonicalize never panics, that its output
// is valid JSON and that canonicalization is idempotent.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"],"b":null}`, `"\u20ac"`, `[1e30,-0,5e-324]`, `{"\ud83d\ude00":1,"\ufb33":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonicalize(data)
		if err != nil {
			return
		}
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, data)
		}
		again, err := Canonicalize(out)
		if err != nil {
			t.Fatalf("canonical output rejected: %v (%q)", err, out)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}
