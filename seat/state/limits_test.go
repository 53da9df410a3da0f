package state

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/guard"
)

// TestLimitsTableIsDocumented: docs/state.md's limits table is FileKinds,
// row for row, so the documented maximum is the one enforced.
func TestLimitsTableIsDocumented(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/state.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, "<!-- limits:begin -->"), strings.Index(doc, "<!-- limits:end -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/state.md has no limits table between its markers")
	}
	row := regexp.MustCompile(`(?m)^\| (.+) \| (\d+) \|$`)
	var got []FileKind
	for _, m := range row.FindAllStringSubmatch(doc[begin:end], -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		got = append(got, FileKind{Kind: m[1], Max: n})
	}
	if len(got) != len(FileKinds) {
		t.Fatalf("docs/state.md lists %d kinds, the code %d", len(got), len(FileKinds))
	}
	for i, k := range FileKinds {
		if got[i].Kind != k.Kind || got[i].Max != k.Max {
			t.Errorf("row %d: docs say %q %d, the code %q %d", i+1, got[i].Kind, got[i].Max, k.Kind, k.Max)
		}
	}
}

// TestEveryPathHasItsKind: the paths pantty reads map to the kinds the table
// names for them.
func TestEveryPathHasItsKind(t *testing.T) {
	t.Parallel()
	s := Seat{Home: "/h", Name: "n", Dir: "/h/seats/n"}
	for path, want := range map[string]int64{
		s.ConfigPath():             1 << 20,
		s.MsgPath("m1"):            6*guard.DefaultMaxMessageBytes + 64<<10,
		s.StatusDir() + "/m1.toml": 4 << 20,
		s.FailedDir() + "/m1.toml": 4 << 20,
		s.ReplyPath("m1"):          MaxReplyBytes + 64<<10,
		s.EventsDir() + "/1.json":  16 << 20,
		s.SeenDir() + "/1.json":    16 << 20,
		s.CursorPath():             4 << 20,
		s.StatusLinePath():         1 << 20,
	} {
		if got := maxFor(path); got != want {
			t.Errorf("%s: limit %d, want %d", path, got, want)
		}
	}
}
