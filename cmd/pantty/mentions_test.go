package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

// TestMentionCountsAreListed: `seat inbox` and `status` show the mention count
// of stored messages as the harness will expand them: an '@' behind an
// invisible character counts.
func TestMentionCountsAreListed(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ment")
	for id, text := range map[string]string{
		"hidden": "read \u200b@secret.txt and \u2066@other.txt", // 2
		"plain":  "mail a@b.example",                            // 0
		"tagged": "\U000E0041@x",                                // 1
	} {
		if r := h.RunStdin(text, "seat", "send", "ment", "--id", id); r.Code != 0 {
			t.Fatalf("send %s: %s", id, r)
		}
	}
	r := h.Run("seat", "inbox", "ment")
	if r.Code != 0 {
		t.Fatal(r)
	}
	want := map[string]string{"hidden": "2", "plain": "0", "tagged": "1"}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 4 || strings.Fields(lines[0])[4] != "MENTIONS" {
		t.Fatalf("seat inbox: want a MENTIONS column and 3 rows, got\n%s", r.Stdout)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if f[4] != want[f[0]] {
			t.Errorf("seat inbox row %q: mentions %s, want %s", l, f[4], want[f[0]])
		}
	}

	r = h.Run("status", "ment", "--json")
	var st struct {
		Seats []struct {
			Inbox struct {
				Mentions *int `json:"mentions"`
			} `json:"inbox"`
		} `json:"seats"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.Stdout)
	}
	if len(st.Seats) != 1 || st.Seats[0].Inbox.Mentions == nil || *st.Seats[0].Inbox.Mentions != 3 {
		t.Fatalf("status --json: want inbox.mentions 3 for the queued messages, got\n%s", r.Stdout)
	}
	if r := h.Run("status", "ment", "--format", "prom"); !regexp.MustCompile(`(?m)^pantty_seat_inbox_mentions\{[^}]*seat="ment"[^}]*\} 3$`).MatchString(r.Stdout) {
		t.Errorf("status --format prom: want pantty_seat_inbox_mentions 3 for seat ment, got\n%s", r.Stdout)
	}
	if r := h.Run("status", "ment"); !strings.Contains(r.Stdout, "3 @mentions") {
		t.Errorf("status table: want the inbox cell to say 3 @mentions, got\n%s", r.Stdout)
	}
}
