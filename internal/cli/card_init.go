package cli

import (
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// cardInitCommand is `caddy a2a card init`: it writes a valid A2A 1.0 card
// or the a2a directive's card block (CARD-9).
func cardInitCommand() *cobra.Command {
	ini := &cobra.Command{
		Use:   "init",
		Short: "Write a valid A2A 1.0 Agent Card (JSON) or the a2a directive's card block",
		Example: `  caddy a2a card init --name "Route Planner" --description "Plans routes with live traffic." \
      --url https://agent.example.com/ --skill 'routes|Route planning|Plans driving routes with traffic.|maps,routing'
  caddy a2a card init --name "Route Planner" --format caddyfile`,
		RunE: runE(runCardInit),
	}
	f := ini.Flags()
	f.String("name", "", "agent name (required)")
	f.String("description", "", "what the agent does and when to call it (20+ characters)")
	f.String("version", card.DefaultVersion, "agent version")
	f.String("url", "", "public base URL of the agent, e.g. https://agent.example.com/ (JSON: required)")
	f.StringSlice("binding", []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}, "protocol bindings, in preference order")
	f.String("provider-org", "", "provider organization")
	f.String("provider-url", "", "provider web site")
	f.String("documentation-url", "", "documentation URL")
	f.Bool("streaming", true, "declare streaming")
	f.StringArray("skill", nil, "skill as 'id|name|description|tag,tag' (repeatable)")
	f.StringSlice("input-modes", []string{"text/plain"}, "default input media types")
	f.StringSlice("output-modes", []string{"text/plain"}, "default output media types")
	f.String("format", "json", "json (a card) or caddyfile (the card block of the a2a directive)")
	f.StringP("output", "o", "", "write to this file instead of stdout")
	return ini
}

func runCardInit(cmd *cobra.Command, args []string) error {
	if err := checkArgs(cmd, args, 0, 0); err != nil {
		return err
	}
	cfg, err := cardConfigFromFlags(cmd)
	if err != nil {
		return err
	}
	f := cmd.Flags()
	format, _ := f.GetString("format")
	var out []byte
	switch format {
	case "json":
		if cfg.PublicURL == "" {
			return usagef("--url is required for a JSON card (the interfaces' URL)")
		}
		bindings, _ := f.GetStringSlice("binding")
		c := card.Build(&cfg, card.Runtime{BaseURL: cfg.PublicURL, Bindings: bindings})
		streaming, _ := f.GetBool("streaming")
		c.Capabilities.Streaming = a2a.Bool(streaming)
		c.Capabilities.ExtendedAgentCard = a2a.Bool(false)
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		out = append(b, '\n')
	case "caddyfile":
		out = []byte(caddyfileCardBlock(cfg))
	default:
		return usagef("--format %q: want json or caddyfile", format)
	}
	if o, _ := f.GetString("output"); o != "" {
		if err := os.WriteFile(o, out, 0o644); err != nil {
			return exitWith(1, errors.New("writing the output file failed"))
		}
		return nil
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// cardConfigFromFlags reads and checks the card of `card init`.
func cardConfigFromFlags(cmd *cobra.Command) (card.Config, error) {
	f := cmd.Flags()
	get := func(n string) string { s, _ := f.GetString(n); return s }
	cfg := card.Config{
		Name:             get("name"),
		Description:      get("description"),
		Version:          get("version"),
		DocumentationURL: get("documentation-url"),
		PublicURL:        get("url"),
	}
	cfg.InputModes, _ = f.GetStringSlice("input-modes")
	cfg.OutputModes, _ = f.GetStringSlice("output-modes")
	if org, u := get("provider-org"), get("provider-url"); org != "" || u != "" {
		cfg.Provider = &card.Provider{Organization: org, URL: u}
	}
	skills, _ := f.GetStringArray("skill")
	for _, s := range skills {
		parts := strings.Split(s, "|")
		if len(parts) != 4 {
			return cfg, usagef("--skill %q: want 'id|name|description|tag,tag'", s)
		}
		var tags []string
		for _, t := range strings.Split(parts[3], ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		cfg.Skills = append(cfg.Skills, card.Skill{ID: parts[0], Name: parts[1], Description: parts[2], Tags: tags})
	}
	if cfg.Name == "" {
		return cfg, usagef("--name is required")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("invalid card: %s", oneLine(err.Error()))
	}
	return cfg, nil
}

// caddyfileCardBlock renders cfg as the a2a directive's card block.
func caddyfileCardBlock(c card.Config) string {
	q := func(s string) string {
		if s != "" && !strings.ContainsAny(s, " \t\"{}#") {
			return s
		}
		return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	var b strings.Builder
	b.WriteString("card {\n")
	line := func(k string, vs ...string) {
		b.WriteString("\t" + k)
		for _, v := range vs {
			b.WriteString(" " + q(v))
		}
		b.WriteString("\n")
	}
	line("name", c.Name)
	if c.Description != "" {
		line("description", c.Description)
	}
	line("version", c.Version)
	if c.Provider != nil {
		line("provider", c.Provider.Organization, c.Provider.URL)
	}
	if c.DocumentationURL != "" {
		line("documentation_url", c.DocumentationURL)
	}
	if c.PublicURL != "" {
		line("public_url", c.PublicURL)
	}
	if len(c.InputModes) > 0 {
		line("input_modes", c.InputModes...)
	}
	if len(c.OutputModes) > 0 {
		line("output_modes", c.OutputModes...)
	}
	for _, s := range c.Skills {
		b.WriteString("\tskill " + q(s.ID) + " {\n")
		b.WriteString("\t\tname " + q(s.Name) + "\n")
		b.WriteString("\t\tdescription " + q(s.Description) + "\n")
		b.WriteString("\t\ttags")
		for _, t := range s.Tags {
			b.WriteString(" " + q(t))
		}
		b.WriteString("\n\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}
