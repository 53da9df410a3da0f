// Package panetext reads what a harness draws in its pane: the horizontal rules
// around an input box, the lines between the last two of them, the text in the
// box. Adapters and the driver share it; it imports nothing of pantty.
package panetext

import "strings"

// Screen helpers shared by the adapters' pane readers: the harnesses draw
// their input box differently, but the pieces repeat.

// IsRule reports a line that is a horizontal rule of box-drawing "─" and
// nothing else (blank space around it allowed).
func IsRule(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && strings.Trim(t, "─") == ""
}

// BetweenLastRules returns the lines between the screen's last two rules
// (isRule says which lines are): where a harness that frames its input box
// with rules draws the box. ok is false when there are not two rules.
func BetweenLastRules(screen string, isRule func(string) bool) (lines []string, ok bool) {
	all := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	var rules []int
	for i, l := range all {
		if isRule(l) {
			rules = append(rules, i)
		}
	}
	if len(rules) < 2 {
		return nil, false
	}
	return all[rules[len(rules)-2]+1 : rules[len(rules)-1]], true
}

// BoxText is the typed text of an input box's lines: the first without its
// prompt and the (non-breaking) spaces after it, the others without their
// two-space continuation indent, trailing spaces and blank lines dropped.
func BoxText(lines []string, prompt string) string {
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		l = strings.TrimRight(l, " \u00a0")
		if i == 0 {
			l = strings.TrimLeft(strings.TrimPrefix(l, prompt), " \u00a0")
		} else {
			l = strings.TrimPrefix(l, "  ")
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
