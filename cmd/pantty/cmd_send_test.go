package main

// The board door at the command line: `pantty seat send` run as a real process
// against a real seat directory. No seat runs in these tests; what they check is
// what the door stores (or refuses to store) in inbox/.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// refusal is one `seat send` that must be refused: exit 2, one line on stderr
// naming the problem, nothing on stdout, the inbox unchanged.
type refusal struct {
	name  string
	stdin string
	args  []string // after "seat send"; the seat name is added when seat is ""
	seat  string   // another seat name to send to (default: the test seat)
	want  string   // a word the one stderr line must contain
	code  int      // the exit code when it is not 2 (bad input)
}

func TestSendRefusesBadInputAndStoresNothing(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "door")
	h.Send("good-1", "a message already in the inbox")
	before := h.InboxFiles()

	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []refusal{
		{name: "invalid UTF-8", stdin: "ok \xff\xfe", want: "invalid UTF-8 at byte 3"},
		{name: "NUL byte", stdin: "a\x00b", want: "NUL"},
		{name: "empty message", stdin: "", want: "empty"},
		{name: "only whitespace", stdin: " \n\t \r\n ", want: "only whitespace"},
		{name: "over the default limit", stdin: long(guard.DefaultMaxMessageBytes + 1), want: "limit"},
		{name: "ESC", stdin: "hi \x1b[31mred", want: "ESC"},
		{name: "bracketed-paste end then a shell command", stdin: "\x1b[201~!touch pwned", want: "ESC"},
		{name: "bracketed-paste end mid-text", stdin: "fine\n\x1b[201~\n!touch pwned", want: "ESC"},
		{name: "BEL", stdin: "a\x07b", want: "BEL"},
		{name: "backspace", stdin: "a\x08b", want: "BS"},
		{name: "ctrl-U", stdin: "a\x15b", want: "NAK"},
		{name: "ctrl-C", stdin: "a\x03b", want: "ETX"},
		{name: "DEL", stdin: "a\x7fb", want: "DEL"},
		{name: "C1 CSI", stdin: "a\u009b201~b", want: "CSI"},
		{name: "C1 NEL", stdin: "a\u0085/compact", want: "NEL"},
		{name: "line separator", stdin: "a\u2028/compact", want: "U+2028"},
		{name: "paragraph separator", stdin: "a\u2029/compact", want: "U+2029"},

		{name: "id with a space", stdin: "x", args: []string{"--id", "a b"}, want: "message id"},
		{name: "id with a newline", stdin: "x", args: []string{"--id", "a\nb"}, want: "message id"},
		{name: "id with unicode", stdin: "x", args: []string{"--id", "é1"}, want: "message id"},
		{name: "id too long", stdin: "x", args: []string{"--id", long(129)}, want: "129 bytes long"},
		{name: "id with a leading dash", stdin: "x", args: []string{"--id=-x"}, want: "message id"},
		{name: "id with a leading dash, separate value", stdin: "x", args: []string{"--id", "-x"}, want: "message id"},
		{name: "id with a slash", stdin: "x", args: []string{"--id", "a/b"}, want: "message id"},
		{name: "id climbing out", stdin: "x", args: []string{"--id", "../x"}, want: "message id"},
		{name: "id with NUL", stdin: "x", args: []string{"--id", "a\x01b"}, want: "message id"},
	}
	for _, f := range []string{"from", "board", "channel"} {
		cases = append(cases,
			refusal{name: f + " with a space", stdin: "x", args: []string{"--" + f, "a b"}, want: "message " + f},
			refusal{name: f + " with a newline", stdin: "x", args: []string{"--" + f, "a\nb"}, want: "message " + f},
			refusal{name: f + " with unicode", stdin: "x", args: []string{"--" + f, "ålice"}, want: "message " + f},
			refusal{name: f + " too long", stdin: "x", args: []string{"--" + f, long(65)}, want: "65 bytes long"},
			refusal{name: f + " with a leading dash", stdin: "x", args: []string{"--" + f + "=-x"}, want: "message " + f},
			refusal{name: f + " with '='", stdin: "x", args: []string{"--" + f, "a=b"}, want: "message " + f},
			refusal{name: f + " with a colon", stdin: "x", args: []string{"--" + f, "a:b"}, want: "message " + f},
		)
	}
	cases = append(cases,
		refusal{name: "reserved sender", stdin: "x", args: []string{"--from", "pantty"}, want: "reserved"},
		refusal{name: "unknown seat", stdin: "x", seat: "nosuch", want: "unknown seat", code: exitNotFound},
		refusal{name: "a stored id with another text", stdin: "another text", args: []string{"--id", "good-1"}, want: "conflict", code: exitConflict},
		refusal{name: "invalid seat name", stdin: "x", seat: "Bad.Name", want: "seat name"},
		refusal{name: "--lines with --jsonl", stdin: "x", args: []string{"--lines", "--jsonl"}, want: "exclude"},
		refusal{name: "--id with --lines", stdin: "x", args: []string{"--lines", "--id", "z1"}, want: "--id"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := c.seat
			if name == "" {
				name = h.Name
			}
			r := h.RunStdin(c.stdin, append([]string{"seat", "send", name}, c.args...)...)
			assertRefused(t, r, c.want, c.code)
			if after := h.InboxFiles(); !reflect.DeepEqual(before, after) {
				t.Fatalf("refused send changed the inbox:\nbefore %v\nafter  %v", keys(before), keys(after))
			}
			if _, err := os.Stat(filepath.Join(h.Home, "seats", "nosuch")); err == nil {
				t.Fatalf("a send to an unknown seat created its directory")
			}
		})
	}
	// Nothing half-written is left behind either.
	if ents, _ := os.ReadDir(h.Seat().TmpDir()); len(ents) != 0 {
		t.Fatalf("tmp/ holds %d leftover file(s) after refused sends", len(ents))
	}
}

// assertRefused checks the refusal contract: exit 2 (or code, when not 0),
// nothing on stdout, exactly one line on stderr that names the problem.
func assertRefused(t *testing.T, r seattest.Result, want string, code int) {
	t.Helper()
	if code == 0 {
		code = exitBadInput
	}
	if r.Code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
	if r.Stdout != "" {
		t.Fatalf("a refusal printed on stdout: %q", r.Stdout)
	}
	line := strings.TrimSuffix(r.Stderr, "\n")
	if line == "" || strings.Contains(line, "\n") {
		t.Fatalf("want exactly one line on stderr, got %q", r.Stderr)
	}
	if !strings.Contains(line, want) {
		t.Fatalf("stderr %q does not name the problem (%q)", line, want)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// storedText reads inbox/msgs/<id>.json the way a person would, without pantty.
func storedText(t *testing.T, h *seattest.Harness, id string) inbox.Stored {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Seat().MsgsDir(), id+".json"))
	if err != nil {
		t.Fatalf("message %s not stored: %v", id, err)
	}
	var m inbox.Stored
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("message %s: %v", id, err)
	}
	return m
}

func msgCount(t *testing.T, h *seattest.Harness) int {
	t.Helper()
	ents, err := os.ReadDir(h.Seat().MsgsDir())
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestSendSizeLimitFromSeatToml(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "small", seattest.TOML("max_message_bytes = 100"))
	if r := h.RunStdin(strings.Repeat("x", 100), "seat", "send", "small", "--id", "at-limit"); r.Code != 0 {
		t.Fatalf("a message of exactly max_message_bytes was refused: %s", r)
	}
	before := h.InboxFiles()
	r := h.RunStdin(strings.Repeat("x", 101), "seat", "send", "small", "--id", "over")
	assertRefused(t, r, "100-byte limit", 0)
	r = h.RunStdin("ok\n"+strings.Repeat("y", 101)+"\nalso ok\n", "seat", "send", "small", "--lines")
	if r.Code != 2 || !strings.Contains(r.Stderr, "line 2 refused") || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 1 {
		t.Fatalf("--lines with one line over the limit: want lines 1 and 3 stored, line 2 refused, exit 2; got %s", r)
	}
	if got := msgCount(t, h); got != len(before)+2 {
		t.Fatalf("inbox holds %d messages, want %d", got, len(before)+2)
	}
}

func TestSendDefaultLimitIsInclusive(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "big")
	text := strings.Repeat("z", guard.DefaultMaxMessageBytes)
	if r := h.RunStdin(text, "seat", "send", "big", "--id", "max"); r.Code != 0 {
		t.Fatalf("a message of exactly 256 KiB was refused: %s", r)
	}
	if got := storedText(t, h, "max").Text; got != text {
		t.Fatalf("stored text is %d bytes, want %d", len(got), len(text))
	}
}

// TestSendSameIDIsADuplicateOrAConflict: an id names one message. The same
// text again is done (exit 0, a duplicate); another text under it is a
// conflict (exit 6, one line), and the stored text stays.
func TestSendSameIDIsADuplicateOrAConflict(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "dup")
	h.Send("d1", "first text")
	r := h.RunStdin("first text", "seat", "send", "dup", "--id", "d1")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "d1 duplicate: already stored" {
		t.Fatalf("second send of one id with the same text: want exit 0 and a duplicate line, got %s", r)
	}
	r = h.RunStdin("second text", "seat", "send", "dup", "--id", "d1")
	if r.Code != exitConflict || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "conflict: message d1 is already stored with a different text") {
		t.Fatalf("another text under a stored id: want exit %d and one conflict line, got %s", exitConflict, r)
	}
	if got := storedText(t, h, "d1").Text; got != "first text" {
		t.Fatalf("the second send replaced the stored text: %q", got)
	}
	if n := msgCount(t, h); n != 1 {
		t.Fatalf("inbox holds %d messages, want 1", n)
	}
}

func TestSendConcurrentSameIDStoresOnce(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "race")
	const senders = 8
	for round := range 4 {
		id := fmt.Sprintf("race-%d", round)
		jobs := make([]seattest.Job, senders)
		for i := range jobs {
			jobs[i] = seattest.Job{Stdin: fmt.Sprintf("text from sender %d", i), Args: []string{"seat", "send", "race", "--id", id}}
		}
		res := h.RunConcurrently(jobs)
		winner := -1
		// Each sender's text differs: one stores it, every other one is told
		// its text conflicts with the stored one.
		for i, r := range res {
			switch out := strings.TrimSpace(r.Stdout); {
			case r.Code == exitConflict && out == "" && strings.Contains(r.Stderr, "conflict"):
			case r.Code != 0:
				t.Fatalf("round %d sender %d: %s", round, i, r)
			case out == id:
				if winner >= 0 {
					t.Fatalf("round %d: senders %d and %d both stored %s", round, winner, i, id)
				}
				winner = i
			default:
				t.Fatalf("round %d sender %d: unexpected output %q", round, i, out)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: every sender reported a duplicate; nobody stored %s", round, id)
		}
		if got := storedText(t, h, id).Text; got != jobs[winner].Stdin {
			t.Fatalf("round %d: stored %q, but the sender that reported storing it sent %q", round, got, jobs[winner].Stdin)
		}
	}
	if n := msgCount(t, h); n != 4 {
		t.Fatalf("inbox holds %d messages, want 4", n)
	}
}

// TestSendLinesStoresEachLineAsItArrives keeps stdin open between lines, the
// way `tail -F board.log | pantty seat send NAME --lines` does, and waits for
// each line's file before writing the next: the door streams, it does not wait
// for EOF.
func TestSendLinesStoresEachLineAsItArrives(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "stream")
	cmd := exec.Command(h.Bin, "seat", "send", "stream", "--lines", "--from", "alice", "--board", "main")
	cmd.Env = h.Env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ids := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ids <- sc.Text()
		}
		close(ids)
	}()
	waitStored := func(n int) string {
		t.Helper()
		h.WaitFor(fmt.Sprintf("%d message(s) in inbox/msgs", n), 10*time.Second, func() bool { return msgCount(t, h) == n })
		select {
		case id := <-ids:
			return id
		case <-time.After(10 * time.Second):
			t.Fatalf("no id printed for message %d", n)
		}
		return ""
	}
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s); err != nil {
			t.Fatal(err)
		}
	}
	write("first line\n")
	id1 := waitStored(1)
	write("bad \x1b[201~ line\n") // line 2: refused, the stream goes on
	write("\n")                   // line 3: blank, skipped
	write("third line\r\n")       // line 4
	id2 := waitStored(2)
	if !strings.Contains(stderr.String(), "line 2 refused") {
		t.Fatalf("the refused line is not named by its number: %q", stderr.String())
	}
	write("last line, no newline")
	stdin.Close()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("a stream with a refused line must exit 2 at the end; got %v (stderr %q)", err, stderr.String())
	}
	id3 := <-ids
	for i, want := range map[string]string{id1: "first line", id2: "third line", id3: "last line, no newline"} {
		m := storedText(t, h, i)
		if m.Text != want || m.From != "alice" || m.Board != "main" {
			t.Fatalf("message %s stored as %+v, want text %q from alice on main", i, m, want)
		}
	}
	if n := msgCount(t, h); n != 3 {
		t.Fatalf("inbox holds %d messages, want 3", n)
	}
	// The seat is not running: said once, then the refused line and a summary.
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[0], "not running") ||
		!strings.Contains(lines[2], "1 line(s) refused") {
		t.Fatalf("stderr: want the not-running note, the refused line and a summary, got %q", stderr.String())
	}
}

func TestSendJSONL(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "jsonl")
	in := strings.Join([]string{
		`{"id":"j1","from":"alice","board":"main","channel":"ops","text":"hello /compact"}`, // 1 stored
		`{"id":"j2","text":"x","color":"red"}`,                                              // 2 unknown field
		`not json at all`,                                                                   // 3
		`{"id":"j1","text":"again"}`,                                                        // 4 conflict: another text
		`{"id":"j3","from":"pantty","text":"x"}`,                                            // 5 reserved sender
		`{"id":"j4","text":"esc \u001b[201~ inside"}`,                                       // 6 control byte
		``, // 7 blank: skipped
		`{"id":"j5","text":"fine\nwith two lines"}`,                                         // 8 stored
		`{"id":"j6","text":"a"} {"id":"j7","text":"smuggled"}`,                              // 9 two objects on one line
		`{"id":"j8 x","text":"bad id"}`,                                                     // 10
		`{"id":"j1","from":"alice","board":"main","channel":"ops","text":"hello /compact"}`, // 11 duplicate: done
		`{"id":9,"text":"a number for an id"}`,                                              // 12 wrong type
		`[1,2]`,                                                                             // 13 not an object
	}, "\n") + "\n"
	r := h.RunStdin(in, "seat", "send", "jsonl", "--jsonl")
	if r.Code != 2 {
		t.Fatalf("want exit 2 (some lines refused), got %s", r)
	}
	for _, want := range []string{"line 2 refused", "unknown field", "line 3 refused", "line 5 refused", "reserved",
		"line 4 refused", "conflict", "line 6 refused", "ESC", "line 9 refused", "line 10 refused",
		"line 12 refused", `"id" must be a string, not a JSON number`, "line 13 refused", "not a JSON array", "9 line(s) refused"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "Go ") || strings.Contains(r.Stderr, "unmarshal") {
		t.Errorf("a refusal names Go's types instead of the sender's words:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stdout, "j1 duplicate: already stored") {
		t.Errorf("line 11 (j1 again, the same text) not reported as a duplicate: %q", r.Stdout)
	}
	m := storedText(t, h, "j1")
	if m.Text != "hello /compact" || m.From != "alice" || m.Board != "main" || m.Channel != "ops" {
		t.Errorf("j1 stored as %+v", m)
	}
	if m := storedText(t, h, "j5"); m.Text != "fine\nwith two lines" {
		t.Errorf("j5 stored as %+v", m)
	}
	if n := msgCount(t, h); n != 2 {
		t.Errorf("inbox holds %d messages, want 2 (j1, j5): %v", n, keys(h.InboxFiles()))
	}
}

// TestSendToARunningSeatWithATypoInSeatToml: the running driver keeps the
// configuration it started with, so the board door keeps taking messages and
// says what to fix; a stopped seat with the same typo refuses (exit 2).
func TestSendToARunningSeatWithATypoInSeatToml(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "typo")
	h.Start()
	f, err := os.OpenFile(h.Seat().ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nturn_cieling = \"5m\"\n")
	f.Close()
	r := h.RunStdin("still taken", "seat", "send", h.Name, "--id", "t1", "--wait", "--timeout", "60s")
	if r.Code != 0 || !strings.Contains(r.Stdout, "sim: received") || strings.Count(r.Stderr, "\n") != 1 ||
		!strings.Contains(r.Stderr, "warning") || !strings.Contains(r.Stderr, "turn_cieling") {
		t.Fatalf("send to a running seat with a typo in seat.toml: want the reply and one warning naming the typo; got %s", r)
	}
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	if r := h.RunStdin("refused now", "seat", "send", h.Name); r.Code != exitBadInput || !strings.Contains(r.Stderr, "turn_cieling") {
		t.Fatalf("send to a stopped seat with a typo: want exit 2 naming it; got %s", r)
	}
}
