package cli

import (
	"fmt"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// textOf joins the text parts of a message.
func textOf(parts []a2a.Part) string {
	var sb strings.Builder
	for _, p := range parts {
		if p.Text != nil {
			sb.WriteString(*p.Text)
		}
	}
	return sb.String()
}

// describeParts summarises non-text parts, e.g. "[file a.png image/png, 120 bytes]".
func describeParts(parts []a2a.Part) []string {
	var out []string
	for _, p := range parts {
		switch p.Kind() {
		case "raw":
			out = append(out, fmt.Sprintf("[file %s %s, %d bytes]", orDash(p.Filename), orDash(p.MediaType), len(p.Raw)))
		case "url":
			out = append(out, fmt.Sprintf("[file %s %s]", p.URL, orDash(p.MediaType)))
		case "data":
			d := string(p.Data)
			if len(d) > 200 {
				d = d[:200] + "…"
			}
			out = append(out, "[data "+d+"]")
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
