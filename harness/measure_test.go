package harness

import (
	"errors"
	"strings"
	"testing"
)

// TestMeasureFindsTheHarnessASeatRuns: --bin wins; the adapter's variable or
// the test suite's cache come next (the suite measures what it pinned); a
// user with neither gets the harness on PATH — after an upgrade, `pantty
// measure contract --harness claude-code` must measure the claude their seats
// run, not fail for want of the test cache.
func TestMeasureFindsTheHarnessASeatRuns(t *testing.T) {
	cached := func(p string, err error) func() (string, error) { return func() (string, error) { return p, err } }
	none := errors.New("no real claude binary: PANTTY_CLAUDE_BIN is unset and /c/claude does not exist")
	for _, c := range []struct {
		name          string
		spec          MeasureSpec
		cache         func() (string, error)
		want, wantErr string
	}{
		{"flag first", MeasureSpec{Bin: "/flag/claude", OnPath: "/usr/bin/claude"}, cached("/c/claude", nil), "/flag/claude", ""},
		{"variable or cache before PATH", MeasureSpec{OnPath: "/usr/bin/claude"}, cached("/c/claude", nil), "/c/claude", ""},
		{"PATH when neither", MeasureSpec{OnPath: "/usr/bin/claude"}, cached("", none), "/usr/bin/claude", ""},
		{"nowhere", MeasureSpec{}, cached("", none), "", "no real claude binary: PANTTY_CLAUDE_BIN is unset and /c/claude does not exist, and the harness is not on PATH"},
	} {
		got, err := c.spec.Binary(c.cache)
		if got != c.want || (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: Binary = %q, %v; want %q, %q", c.name, got, err, c.want, c.wantErr)
		}
	}
}
