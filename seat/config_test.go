package seat_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// insertAfter puts line into text right after the first line starting with
// prefix and returns the new text and the 1-based number of the inserted line.
func insertAfter(t *testing.T, text, prefix, line string) (string, int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out := append(append(append([]string{}, lines[:i+1]...), line), lines[i+1:]...)
			return strings.Join(out, "\n"), i + 2
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, text)
	return "", 0
}

func replaceLine(t *testing.T, text, prefix, line string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("no line starting with %q", prefix)
	return ""
}

// A seat.toml that does not validate makes `seat start` exit 2 with one line
// naming the file (and the line where the library or pantty can find it), and
// changes nothing: no intent, no session, no driver, no tmux server.
func TestBadSeatTomlRefusesStartAndChangesNothing(t *testing.T) {
	t.Parallel()
	type tc struct {
		edit func(t *testing.T, base string) (text string, line int)
		want []string
	}
	after := func(line string) func(*testing.T, string) (string, int) {
		return func(t *testing.T, base string) (string, int) { return insertAfter(t, base, "shape = ", line) }
	}
	// afterV inserts a line whose problem only validation finds (no position).
	afterV := func(line string) func(*testing.T, string) (string, int) {
		return func(t *testing.T, base string) (string, int) {
			text, _ := insertAfter(t, base, "shape = ", line)
			return text, 0
		}
	}
	replace := func(prefix, line string) func(*testing.T, string) (string, int) {
		return func(t *testing.T, base string) (string, int) { return replaceLine(t, base, prefix, line), 0 }
	}
	// envWith adds an entry to the template's inline env table.
	envWith := func(entry string) func(*testing.T, string) (string, int) {
		return func(t *testing.T, base string) (string, int) {
			if !strings.Contains(base, "\nenv = { ") {
				t.Fatalf("the template has no inline env table:\n%s", base)
			}
			return strings.Replace(base, "\nenv = { ", "\nenv = { "+entry+", ", 1), 0
		}
	}
	cases := map[string]tc{
		"unknown key":           {after(`colour = "blue"`), []string{`unknown key "colour"`}},
		"key set twice":         {after(`shape = "resident"`), []string{"shape is set twice", "keep one"}},
		"unknown key in table":  {func(t *testing.T, b string) (string, int) { return insertAfter(t, b, "[tmux]", `sockett = "x"`) }, []string{`unknown key "tmux.sockett"`}},
		"wrong type":            {after(`max_message_bytes = "big"`), []string{"max_message_bytes"}},
		"wrong type for a list": {after(`args = "--verbose"`), []string{"args"}},
		"bad duration":          {after(`turn_ceiling = "5 minutes"`), []string{`bad duration "5 minutes"`}},
		"negative duration":     {after(`ready_timeout = "-1s"`), []string{"negative duration"}},
		"syntax error":          {after(`harness = "sim`), nil},
		"missing workdir":       {replace("workdir = ", ""), []string{"workdir is missing"}},
		"relative workdir":      {replace("workdir = ", `workdir = "work"`), []string{"absolute"}},
		"workdir does not exist": {func(t *testing.T, b string) (string, int) {
			return replaceLine(t, b, "workdir = ", `workdir = "/nonexistent/pantty-test"`), 0
		}, []string{"/nonexistent/pantty-test", "no such file"}},
		"workdir is a file":    {replace("workdir = ", `workdir = "/etc/hostname"`), []string{"not a directory"}},
		"name mismatch":        {replace("name = ", `name = "someone-else"`), []string{`"someone-else"`, "does not match"}},
		"unknown harness":      {replace("harness = ", `harness = "emacs"`), []string{`"emacs"`}},
		"unknown shape":        {replace("shape = ", `shape = "sideways"`), []string{`"sideways"`}},
		"unknown transport":    {afterV(`transport = "pigeon"`), []string{`transport = "pigeon"`, "want tmux, app-server or auto"}},
		"app-server on sim":    {afterV(`transport = "app-server"`), []string{`transport = "app-server"`, "only the codex harness"}},
		"reserved env TMUX":    {envWith(`TMUX = "/tmp/x,1,0"`), []string{`"TMUX"`, "reserved"}},
		"reserved CLAUDECODE":  {envWith(`CLAUDECODE = "1"`), []string{`"CLAUDECODE"`, "reserved"}},
		"reserved PANTTY_SEAT": {envWith(`PANTTY_SEAT = "x"`), []string{`"PANTTY_SEAT"`, "reserved"}},
		"reserved pass_env":    {afterV(`pass_env = ["TMUX"]`), []string{`"TMUX"`}},
		"bad env name":         {envWith(`"A-B" = "1"`), []string{`"A-B"`}},
		"submit_retries range": {afterV(`submit_retries = 99`), []string{"submit_retries"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := seattest.New(t, "cfg")
			s := h.Seat()
			base, err := os.ReadFile(s.ConfigPath())
			if err != nil {
				t.Fatal(err)
			}
			text, line := c.edit(t, string(base))
			h.WriteConfig(text)
			before := tree(t, s.Dir)

			r := h.Run("seat", "start", "cfg")
			if r.Code != 2 {
				t.Fatalf("want exit 2, got %s", r)
			}
			msg := strings.TrimRight(r.Stderr, "\n")
			if strings.Contains(msg, "\n") {
				t.Errorf("want one line on stderr, got:\n%s", r.Stderr)
			}
			want := append([]string{s.ConfigPath()}, c.want...)
			if line > 0 {
				want = append(want, fmt.Sprintf("line %d", line))
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr should contain %q: %s", w, msg)
				}
			}
			if d := diffTrees(before, tree(t, s.Dir)); len(d) > 0 {
				t.Errorf("a refused start changed the seat directory: %v", d)
			}
			if _, err := os.Stat(s.SessionPath()); !os.IsNotExist(err) {
				t.Errorf("session.toml exists after a refused start (%v)", err)
			}
			if h.ServerRunning() || len(h.HarnessPIDs()) != 0 {
				t.Errorf("a refused start left a tmux server or harness running")
			}
		})
	}
}

// The commented seat.toml that `seat init` writes is itself valid under the
// strict decoder, and the defaults it documents are the ones applied.
func TestInitConfigIsValidAndDefaultsApplied(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	work := t.TempDir()
	s, err := state.Open(home, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(s, "sim", work, map[string]string{"FOO": "bar baz"}); err != nil {
		t.Fatal(err)
	}
	c, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "fresh" || c.Harness != "sim" || c.Workdir != work || c.Shape != config.ShapeResident || c.Env["FOO"] != "bar baz" {
		t.Fatalf("config: %+v", c)
	}
	if c.TurnCeiling.Duration != config.DefaultTurnCeiling || c.HeartbeatInterval.Duration != config.DefaultHeartbeatInterval ||
		c.ReadyTimeout.Duration != config.DefaultReadyTimeout || c.SubmitRetries != config.DefaultSubmitRetries ||
		c.MaxMessageBytes != guard.DefaultMaxMessageBytes {
		t.Fatalf("defaults not applied: %+v", c)
	}
	// init never replaces the person's file.
	if err := seat.InitConfig(s, "sim", work, nil); !errors.Is(err, state.ErrBadInput) {
		t.Fatalf("a second init: want ErrBadInput, got %v", err)
	}
}

// A refused `seat init` (exit 2) creates nothing at all, not even the seat's
// empty directories: a later init of the same name must see a clean slate.
func TestRefusedInitCreatesNothing(t *testing.T) {
	t.Parallel()
	h := seattest.Bare(t, "nothing")
	for _, args := range [][]string{
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", "/nonexistent/pantty-test"},
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", "/etc/hostname"},
		{"seat", "init", "nothing", "--harness", "emacs", "--workdir", h.Work},
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", h.Work, "--env", "TMUX=x"},
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", h.Work, "--env", "CLAUDECODE=1"},
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", h.Work, "--env", "A B=1"},
		{"seat", "init", "nothing", "--harness", "sim", "--workdir", h.Work, "--env", "novalue"},
	} {
		r := h.Run(args...)
		if r.Code != 2 {
			t.Errorf("pantty %q: want exit 2, got %s", args, r)
		}
		if _, err := os.Stat(h.Home); !os.IsNotExist(err) {
			t.Fatalf("pantty %q was refused but created %v", args, tree(t, h.Home))
		}
	}
	if r := h.Run("seat", "init", "nothing", "--harness", "sim", "--workdir", h.Work); r.Code != 0 {
		t.Fatalf("a valid init after the refusals: %s", r)
	}
	if _, err := os.Stat(filepath.Join(h.Home, "seats", "nothing", "seat.toml")); err != nil {
		t.Fatal(err)
	}
}

// A workdir that overlaps pantty's state is refused (exit 2, one line naming
// the overlap): the harness's sandbox lets the model write its workdir, so a
// workdir holding the drop root would let the seat write every other seat's
// drop directory (measured on Claude Code 2.1.328, docs/intake.md). `seat
// init` refuses it creating nothing; a seat.toml edited to it afterwards is
// refused by `seat start` before any driver or tmux server starts.
func TestWorkdirOverlappingStateIsRefused(t *testing.T) {
	t.Parallel()
	h := seattest.Bare(t, "apart")
	root := filepath.Dir(h.Home)
	drop := filepath.Join(root, "."+filepath.Base(h.Home)+"-drop")
	link := filepath.Join(h.Work, "up")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(h.Home, "inside"), filepath.Join(drop, "inside")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]string{
		"the state root's parent (holds it and the drop root)": root,
		"a symlink to that parent":                             link,
		"a directory inside the state root":                    filepath.Join(h.Home, "inside"),
		"a directory inside the drop root":                     filepath.Join(drop, "inside"),
	}
	for what, work := range cases {
		r := h.Run("seat", "init", "apart", "--harness", "sim", "--workdir", work)
		if r.Code != 2 || !strings.Contains(r.Stderr, "overlaps") || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("seat init with workdir = %s: want exit 2 and one line naming the overlap, got %s", what, r)
		}
		if _, err := os.Stat(h.Seat().Dir); !os.IsNotExist(err) {
			t.Fatalf("a refused init created %s", h.Seat().Dir)
		}
	}
	if r := h.Run("seat", "init", "apart", "--harness", "sim", "--workdir", h.Work); r.Code != 0 {
		t.Fatalf("seat init with a workdir apart from the state: %s", r)
	}
	s := h.Seat()
	data, err := os.ReadFile(s.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), fmt.Sprintf("workdir = %q", h.Work), fmt.Sprintf("workdir = %q", root), 1)
	if edited == string(data) {
		t.Fatalf("seat.toml has no workdir line to edit:\n%s", data)
	}
	h.WriteConfig(edited)
	r := h.Run("seat", "start", "apart")
	if r.Code != 2 || !strings.Contains(r.Stderr, "overlaps pantty's state root") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("seat start with workdir = the state root's parent: want exit 2 and one line naming the overlap, got %s", r)
	}
	if _, err := os.Stat(s.DriverLogPath()); !os.IsNotExist(err) || h.ServerRunning() {
		t.Errorf("a refused start ran a driver (%v) or a tmux server (%v)", err, h.ServerRunning())
	}
}
