package validate

import (
	"fmt"
	"strings"
)

// skills checks each skill: id, name, description and tags, unique ids.
func (c *checker) skills(card map[string]any) {
	arr, _ := card["skills"].([]any)
	ids := map[string]bool{}
	for i, e := range arr {
		ptr := Pointer("skills", i)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(Error, ptr, "skill is not an object", "use {id, name, description, tags}")
			continue
		}
		for _, f := range []string{"id", "name", "description"} {
			if s, _ := str(m, f); strings.TrimSpace(s) == "" {
				c.add(Error, ptr+"/"+f, "skill "+f+" is missing or empty", "every skill needs id, name, description and tags")
			}
		}
		if id, _ := str(m, "id"); id != "" {
			if ids[id] {
				c.add(Error, ptr+"/id", fmt.Sprintf("duplicate skill id %q", id), "give each skill a unique id")
			}
			ids[id] = true
		}
		if tags, _ := m["tags"].([]any); len(tags) == 0 {
			c.add(Error, ptr+"/tags", "skill has no tags (required in v1.0)", `add "tags": ["…"] with keywords routers match on`)
		}
		if d, ok := str(m, "description"); ok && strings.TrimSpace(d) != "" && len([]rune(strings.TrimSpace(d))) < 20 {
			c.add(Warning, ptr+"/description", "skill description is shorter than 20 characters", "describe the task boundary of the skill")
		}
	}
}
