package state_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/state"
)

// Regression tests for what the fuzz targets found (docs/reliability.md).

// FuzzReadState found `[" '"]`: an unknown key spelled with quotes inside a
// quoted key was reported without its line (the line finder trimmed quotes
// instead of reading the key).
func TestUnknownQuotedKeysAreReportedWithTheirLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ text, line string }{
		"quote inside a quoted table": {"session_id = \"x\"\n[\" '\"]\n", "line 2"},
		"dot inside a quoted key":     {"session_id = \"x\"\n\"a.b\" = 1\n", "line 2"},
		"escaped quote in a key":      {"session_id = \"x\"\n\n\"say \\\"hi\\\"\" = 1\n", "line 3"},
		"literal key with a dot":      {"session_id = \"x\"\n'x.y' = 2\n", "line 2"},
		"key after a BOM":             {"\ufeffsurprise = 1\n", "line 1"},
		"inline table member":         {"session_id = \"x\"\nz = { a = 1 }\n", "line 2"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := fuzzSeat(t)
			path := s.Dir + "/handoff/inject.toml"
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			var v state.Inject
			err := state.ReadState(path, &v)
			if err == nil || !strings.Contains(err.Error(), "unknown key") || !strings.Contains(err.Error(), c.line) {
				t.Fatalf("want an unknown-key error naming %s, got %v", c.line, err)
			}
		})
	}
}

// FuzzReadState found that BurntSushi/toml decodes `pid_start = -1` into the
// uint64 field by wrapping it to 2^64-1: owner.toml read fine and could not be
// written back. A negative start time is a corrupt record.
func TestNegativePIDStartIsACorruptOwnerRecord(t *testing.T) {
	t.Parallel()
	s := fuzzSeat(t)
	if err := os.WriteFile(s.OwnerPath(), []byte("holder = \"h-1\"\npid = 5\npid_start = -1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := s.OwnerFile().Read()
	if err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), s.OwnerPath()) {
		t.Fatalf("want a corrupt-record error naming the file, got %v (pid_start %d)", err, o.PIDStart)
	}
	if _, live, err := s.LiveOwner(); live || err == nil {
		t.Fatalf("LiveOwner: live=%v err=%v, want not live and the error", live, err)
	}
}

// FuzzParseStatusLine found negative token counts read as a reading, and two
// large counts whose sum overflowed into a negative occupancy.
func TestStatusLineRefusesNegativeAndOverflowingCounts(t *testing.T) {
	t.Parallel()
	for name, payload := range map[string]string{
		"negative": `{"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":-5,"cache_read_input_tokens":12000}}}`,
		"overflow": `{"context_window":{"current_usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807}}}`,
		"window":   `{"context_window":{"context_window_size":-1,"current_usage":{"input_tokens":5}}}`,
	} {
		if r, err := state.ParseStatusLine([]byte(payload)); err == nil {
			t.Errorf("%s: read as %+v", name, r)
		}
	}
	r, err := state.ParseStatusLine([]byte(`{"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":5,"cache_creation_input_tokens":7,"cache_read_input_tokens":12000}}}`))
	if err != nil || r.Occupancy != 12012 {
		t.Fatalf("a good payload: %+v %v", r, err)
	}
}
