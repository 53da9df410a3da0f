package claudecode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// mentionCase is one line of board text with one '@' mention of its own canary
// file; expanded is whether the file's content reached the model.
type mentionCase struct {
	name string
	line string // %s is the canary file's name
}

// TestMentionCountMatchesWhatClaudeExpands: the guard's mention count against
// the real Claude Code 2.1.328. One board message holds one line per case, each
// mentioning its own canary file; a case "expands" when the canary's content is
// in the model request (the stand-in's log). For every case the count of its
// line must equal what expanded: an invisible character before the '@' (the 11
// first measured to be stripped, docs/intake.md "Mentions", and other format characters) must not hide a mention,
// and a mention the harness does not expand must not be counted.
func TestMentionCountMatchesWhatClaudeExpands(t *testing.T) {
	r := newRig(t, "ment")
	cases := []mentionCase{
		{"plain", "@%s"},
		{"glued to a word", "word@%s"},
	}
	for _, x := range []rune{0x200b, 0x200c, 0x200d, 0x2060, 0x202e, 0x2066, 0x200e, 0x00ad, 0x180e, 0xfe0f, 0xe0041} {
		cases = append(cases, mentionCase{fmt.Sprintf("U+%04X before @ (measured list)", x), string(x) + "@%s"})
	}
	for _, x := range []rune{0x200f, 0x2062, 0x061c, 0xfe00, 0xe0100, 0xe0001, 0xfeff, 0x034f, 0x180b} {
		cases = append(cases, mentionCase{fmt.Sprintf("U+%04X before @", x), string(x) + "@%s"})
	}
	cases = append(cases,
		mentionCase{"U+200B after @", "@\u200b%s"},
		mentionCase{"U+200B glued to a word", "word\u200b@%s"},
		mentionCase{"U+200B after a space", "see \u200b@%s"},
		mentionCase{"U+FEFF glued to a word", "word\ufeff@%s"},
		mentionCase{"U+FEFF after @", "@\ufeff%s"},
		mentionCase{"U+2066 after @", "@\u2066%s"})

	var text strings.Builder
	text.WriteString("read these files")
	canary := map[int]string{}
	for i, c := range cases {
		file := fmt.Sprintf("m%02d.txt", i)
		canary[i] = fmt.Sprintf("canary%02dq%dz", i, time.Now().UnixNano()%1e9)
		if err := os.WriteFile(filepath.Join(r.Work, file), []byte(canary[i]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		text.WriteString("\n" + fmt.Sprintf(c.line, file))
	}
	r.Start()
	r.Send("mentions", text.String())
	r.Processed("mentions")
	q, ok := r.request("mentions")
	if !ok {
		t.Fatal("no model request carried message mentions")
	}
	body := string(q.Body)
	total := 0
	for i, c := range cases {
		line := fmt.Sprintf(c.line, fmt.Sprintf("m%02d.txt", i))
		expanded := 0
		if strings.Contains(body, canary[i]) {
			expanded = 1
		}
		total += expanded
		got := guard.MentionCount(line)
		t.Logf("%-34s %-22q claude expanded %d, counted %d", c.name, line, expanded, got)
		if got != expanded {
			t.Errorf("%s: %q counts %d mention(s), Claude Code expanded %d", c.name, line, got, expanded)
		}
	}
	header := ""
	for _, l := range strings.Split(q.NewInput, "\n") {
		if strings.HasPrefix(l, guard.Prefix) {
			header = l
			break
		}
	}
	if !strings.HasSuffix(header, fmt.Sprintf(" mentions=%d", total)) {
		t.Errorf("header %q: want mentions=%d, the number of files that reached the model", header, total)
	}
}

// TestInSeatEscapesRefusedOnRealClaude: the seat's model runs, through its Bash
// tool (the stand-in answers with a Bash call), the escapes measured on main:
// setsid -f, a double fork and env -u around `seat stop OTHER`, `seat command
// SELF -- /compact`, `handoff note --seat OTHER` and `seat retry OTHER ID`. Each
// is refused (exit 2, recorded by the command itself in a file); the other seat
// still runs with its files unchanged; `handoff note` for its own seat works.
func TestInSeatEscapesRefusedOnRealClaude(t *testing.T) {
	// Isolation off: this is the layer that must hold without the sandbox (a
	// host where bubblewrap cannot run, a seat with isolation = "off"). With it
	// on, the sandbox's own pid namespace ends detached children when the Bash
	// call returns and its mount rules hide $PANTTY_HOME, which is
	// TestIsolationRefusesForgedStateAndKeepsHandoffNote's subject.
	r := newRig(t, "esc", `permission_mode = "acceptEdits"`, "[authority]", `isolation = "off"`)
	r.allowBash()
	other, err := state.Open(r.Home, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(other, "sim", r.Work, seattest.FastSim); err != nil {
		t.Fatal(err)
	}
	if res := r.Run("seat", "start", "other"); res.Code != 0 {
		t.Fatalf("start seat other: %s", res)
	}
	t.Cleanup(func() { r.Run("seat", "stop", "other") })
	owner, live, _ := other.LiveOwner()
	if !live {
		t.Fatal("seat other has no live driver")
	}
	otherSess, err := other.SessionFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	notesBefore := listDir(filepath.Join(other.Dir, "handoff", "notes"))
	r.Start()

	pantty := func(args ...string) string {
		argv := append([]string{r.Bin, "--home", r.Home}, args...)
		for i := range argv {
			argv[i] = tmux.ShellQuote(argv[i])
		}
		return "env -u " + launch.SeatEnv + " -u " + launch.SeatHomeEnv + " " + strings.Join(argv, " ")
	}
	type attempt struct {
		name string
		cmd  string
		want string // exit code
	}
	var attempts []attempt
	for _, via := range []string{"setsid", "double-fork", "env-u"} {
		for _, c := range []struct{ name, cmd string }{
			{"seat stop other", pantty("seat", "stop", "other")},
			{"seat command self /compact", pantty("seat", "command", "esc", "--", "/compact")},
			{"handoff note --seat other", pantty("handoff", "note", "--seat", "other", "planted by seat esc")},
			{"seat retry other", pantty("seat", "retry", "other", "m1")},
		} {
			attempts = append(attempts, attempt{via + ": " + c.name, wrap(via, c.cmd), "2"})
		}
	}
	attempts = append(attempts, attempt{"handoff note (own seat)", wrap("setsid", pantty("handoff", "note", "a note of seat esc")), "0"})
	var script strings.Builder
	for i, a := range attempts {
		script.WriteString(strings.ReplaceAll(a.cmd, "@N", fmt.Sprint(i)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(r.Work, "escape.sh"), []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	r.Send("escape", "run the script\n[standin:bash=sh escape.sh")
	r.WaitFinal(90*time.Second, "escape")
	r.WaitFor("every attempt to record its exit code", 60*time.Second, func() bool {
		for i := range attempts {
			if _, err := os.Stat(filepath.Join(r.Work, fmt.Sprintf("code%d", i))); err != nil {
				return false
			}
		}
		return true
	})
	for i, a := range attempts {
		code, _ := os.ReadFile(filepath.Join(r.Work, fmt.Sprintf("code%d", i)))
		out, _ := os.ReadFile(filepath.Join(r.Work, fmt.Sprintf("out%d", i)))
		if got := strings.TrimSpace(string(code)); got != a.want {
			t.Errorf("%s: exit %s, want %s (%q)", a.name, got, a.want, out)
		} else if a.want == "2" && !strings.Contains(string(out), `inside seat "esc"`) {
			t.Errorf("%s: exit 2 but not the in-seat refusal: %q", a.name, out)
		}
	}

	if o, live, _ := other.LiveOwner(); !live || o.Holder != owner.Holder {
		t.Errorf("seat other's driver changed: live=%v holder %s, want %s", live, o.Holder, owner.Holder)
	}
	if s, err := other.SessionFile().Read(); err != nil || s.PanePID != otherSess.PanePID {
		t.Errorf("seat other's harness changed: %+v (%v), want pane pid %d", s, err, otherSess.PanePID)
	}
	if in, err := other.IntentFile().Read(); err != nil || in.Want != "running" {
		t.Errorf("seat other's intent: %+v (%v), want running", in, err)
	}
	if after := listDir(filepath.Join(other.Dir, "handoff", "notes")); after != notesBefore {
		t.Errorf("seat other's handoff notes changed from inside seat esc: %q -> %q", notesBefore, after)
	}
	if listDir(filepath.Join(r.Seat().Dir, "handoff", "notes")) == "" {
		t.Error("handoff note for its own seat wrote no note")
	}
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			t.Fatal("seat esc was compacted by a command its own model ran")
		}
	}
}

// wrap runs cmd the way an escaping model would, writing its output to out@N
// and its exit code to code@N (the runner replaces @N with the attempt number;
// the code file appears by rename, complete).
func wrap(via, cmd string) string {
	inner := cmd + " </dev/null >out@N 2>&1; echo $? >code@N.tmp; mv code@N.tmp code@N"
	switch via {
	case "setsid":
		return "setsid -f sh -c " + tmux.ShellQuote(inner)
	case "double-fork":
		return "( (sh -c " + tmux.ShellQuote(inner) + ") & )"
	}
	return "sh -c " + tmux.ShellQuote(inner)
}

// allowBash allows the Bash tool for the seat's workdir (project settings,
// trusted by PrepareHome); with permission_mode acceptEdits no permission prompt
// stops the turn. Claude Code 2.1.328's default mode is "auto", whose safety
// check runs on Anthropic's server: through a loopback API it cannot run, and for
// a command such as an env assignment and sh -c a dialog holds the turn
// (measured; docs/claude-code.md).
func (r *rig) allowBash() {
	r.T.Helper()
	settings := filepath.Join(r.Work, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		r.T.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions":{"allow":["Bash"]}}`), 0o600); err != nil {
		r.T.Fatal(err)
	}
}

// listDir names a directory's entries, "" when it has none or does not exist.
func listDir(dir string) string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
