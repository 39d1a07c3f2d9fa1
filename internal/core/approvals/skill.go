package approvals

import (
	"fmt"
	"strings"
)

// renderSkill is the owner's view of a skill the agent drafted: a new one
// in full; a change as the whole new text with each line marked against
// the version in use ("+ " added, "- " removed, "  " kept), so every byte
// the owner approves is on the card. Every line is escaped.
func renderSkill(sd SkillDraft) string {
	var b strings.Builder
	if sd.Live == "" {
		fmt.Fprintf(&b, "New skill: %s (until you approve it, it is in no prompt and cannot be loaded)\n", sd.Name)
		fmt.Fprintf(&b, "Content hash: %s\n--- SKILL.md (%d bytes) ---\n%s", sd.Hash, len(sd.Text), escapeLines(strings.TrimRight(sd.Text, "\n")))
		return b.String()
	}
	fmt.Fprintf(&b, "Changed skill: %s (the version in use stays until you approve; it is kept as a version)\n", sd.Name)
	fmt.Fprintf(&b, "Content hash: %s\n--- SKILL.md (%d bytes; + added, - removed) ---\n", sd.Hash, len(sd.Text))
	b.WriteString(lineDiff(strings.TrimRight(sd.Live, "\n"), strings.TrimRight(sd.Text, "\n")))
	return strings.TrimRight(b.String(), "\n")
}

// maxDiffCells bounds the table of lineDiff (lines before × lines after);
// past it the change is shown as the old text removed and the new added.
const maxDiffCells = 1 << 21

// lineDiff marks the lines of after against before by a longest common
// subsequence of lines; each line is escaped.
func lineDiff(before, after string) string {
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out strings.Builder
	line := func(mark, s string) { out.WriteString(mark + escapeLines(s) + "\n") }
	if len(a)*len(b) > maxDiffCells {
		for _, s := range a {
			line("- ", s)
		}
		for _, s := range b {
			line("+ ", s)
		}
		return out.String()
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:], in one flat slice.
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			line("  ", a[i])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i*w+j+1] >= lcs[(i+1)*w+j]):
			line("+ ", b[j])
			j++
		default:
			line("- ", a[i])
			i++
		}
	}
	return out.String()
}
