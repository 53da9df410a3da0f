package recover

import (
	"testing"
)

// The exit code and the revived count read whether a revival was verified
// from the report's typed field, never from the words of its result.
func TestExitCodeReadsTheVerifiedField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		seat SeatReport
		code int
	}{
		{SeatReport{Verdict: Dead, Result: "verified-looking words from a reason", revived: false}, 1},
		{SeatReport{Verdict: Dead, Result: "verified on rung b", revived: true}, 0},
		{SeatReport{Verdict: Dead, Result: "not verified: no live driver yet"}, 1},
		{SeatReport{Verdict: OK}, 0},
		{SeatReport{Verdict: Unknown, revived: true}, 4},
	} {
		if got := exitCode(Report{Seats: []SeatReport{c.seat}}); got != c.code {
			t.Errorf("%+v: exit %d, want %d", c.seat, got, c.code)
		}
	}
}
