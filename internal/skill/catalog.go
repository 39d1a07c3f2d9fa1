package skill

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Catalog renders a line per skill in use for the system prompt, in at
// most budget bytes: "- name: " and the description as a quoted string,
// capped at MaxCatalogDescription characters, in the order of the names.
// When they do not all fit it keeps the skills used most and most lately
// (see rank) that fit, and a last line saying how many were left out and
// that list_skills lists them all; no skill is left out silently (the
// note is there even when the budget is smaller than it). Broken skills
// are left out.
func (l *Library) Catalog(budget int) string {
	list, _, _ := l.List()
	return catalog(rank(list, l.usage(), l.now()), budget)
}

// MaxCatalogDescription caps, in characters, a skill's description in the
// catalog: one skill cannot crowd out the others.
const MaxCatalogDescription = 200

// halfLife is how fast a use of a skill counts less in the catalog's
// choice: a use this long ago counts half as much as one now.
const halfLife = 14 * 24 * time.Hour

// rank orders list by preference for the catalog: by uses, each counting
// half as much every halfLife since the skill was last used (Used), then
// the last used first, then by name (a skill never used comes after every
// skill used, in the order of the names).
func rank(list []Skill, use map[string]usage, now time.Time) []Skill {
	out := slices.Clone(list)
	weight := make(map[string]float64, len(out))
	for _, s := range out {
		weight[s.Name] = use[s.Name].weight(now)
	}
	slices.SortStableFunc(out, func(a, b Skill) int {
		if c := cmp.Compare(weight[b.Name], weight[a.Name]); c != 0 {
			return c
		}
		if c := use[b.Name].Last.Compare(use[a.Name].Last); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// catalogLine is one skill in the catalog: its name, then its description
// as a quoted string (data, not instructions), capped.
func catalogLine(s Skill) string {
	d := []rune(s.DescriptionLine())
	desc := string(d)
	if len(d) > MaxCatalogDescription {
		desc = string(d[:MaxCatalogDescription-1]) + "…"
	}
	return "- " + s.Name + ": " + strconv.Quote(desc) + "\n"
}

// catalog renders the skills of list, which is in order of preference,
// within budget: the first ones that fit with the note of those left out,
// shown in the order of their names.
func catalog(list []Skill, budget int) string {
	lines := make([]string, len(list))
	total := 0
	for i, s := range list {
		lines[i] = catalogLine(s)
		total += len(lines[i])
	}
	var kept []int
	if total <= budget {
		kept = make([]int, len(list))
		for i := range kept {
			kept[i] = i
		}
	} else {
		used := 0
		for i, line := range lines {
			// Taking this line, at most len(list)-len(kept)-1 are left out;
			// the note for fewer is no longer.
			note := len(omitted(max(1, len(list)-len(kept)-1)))
			if used+len(line)+note <= budget {
				kept = append(kept, i)
				used += len(line)
			}
		}
	}
	slices.SortFunc(kept, func(a, b int) int { return strings.Compare(list[a].Name, list[b].Name) })
	var b strings.Builder
	for _, i := range kept {
		b.WriteString(lines[i])
	}
	if n := len(list) - len(kept); n > 0 {
		b.WriteString(omitted(n))
	}
	return b.String()
}

// omitted is the catalog's last line when n skills are not in it.
func omitted(n int) string {
	if n == 1 {
		return "(1 more skill not shown; list_skills lists them all)\n"
	}
	return fmt.Sprintf("(%d more skills not shown; list_skills lists them all)\n", n)
}
