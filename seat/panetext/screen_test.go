package panetext

import "testing"

func TestBoxBetweenRules(t *testing.T) {
	t.Parallel()
	screen := "reply text\n────────\nold box\n────────\n──────────\n❯\u00a0first line  \n  second line\n\n──────────\n  ? for shortcuts\n"
	box, ok := BetweenLastRules(screen, IsRule)
	if !ok || len(box) != 3 {
		t.Fatalf("box %q, %v; want the three lines between the last two rules", box, ok)
	}
	if got := BoxText(box, "❯"); got != "first line\nsecond line" {
		t.Errorf("text %q", got)
	}
	if _, ok := BetweenLastRules("one rule\n─────\nno other", IsRule); ok {
		t.Error("a screen with one rule has a box")
	}
	for _, l := range []string{"", "   ", "── x ──", "-----"} {
		if IsRule(l) {
			t.Errorf("%q is a rule", l)
		}
	}
}
