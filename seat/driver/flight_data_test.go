package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// Flight transcripts as data (testdata/flight/*.txt), in the manner of etcd
// raft's testdata: each case is one command, a "----" line, and what the
// command made happen — the keys that reached the pane, the state files
// that changed (each message's status, the cursor), the driver's phase and
// what its heartbeat says it waits for — then a blank line. One runner reads
// them all, so a refactor that keeps behaviour keeps them green without
// touching them, and a change of behaviour shows as a diff of plain text.
// PANTTY_REWRITE=1 writes what happened back into the files (then read the
// diff before committing it).
//
// Commands:
//
//	driver bare|box           a driver at an idle boundary (box: its adapter reads the input box)
//	screen NAME [TEXT]        the pane shows idle, busy, dialog, blank, or box TEXT (text in the input box)
//	react KEY NAME [TEXT]     once KEY (paste, Enter, C-u) is sent, the pane shows that screen
//	queue ID TEXT             a board message stored and seen by the inbox watch
//	boundary                  a turn boundary: the next message may go (pane watches answered)
//	prompt ID PROMPT_ID       UserPromptSubmit carrying what was pasted for ID
//	forged ID PROMPT_ID       the same, with another nonce (a person retyping an old header)
//	stop PROMPT_ID [REPLY]    the turn's Stop
//	silence                   the evidence timer fires (no UserPromptSubmit came)
//	writes broken|mended      every state write fails as on a full disk, or works again
//	state-retry               the driver's retry timer fires (it writes what is pending)
func TestFlightTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "flight", "*.txt"))
	if err != nil || len(files) < 5 {
		t.Fatalf("found %d flight transcripts (%v): want the five the runner was written with", len(files), err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runFlightFile(t, f)
		})
	}
}

// flightCase is one command of a transcript file and what it expects.
type flightCase struct {
	comments []string // the lines before the command: kept on a rewrite
	command  string
	line     int
	want     []string
}

func parseFlightFile(t *testing.T, path string) []flightCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []flightCase
	var c flightCase
	inWant := false
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case inWant && l == "":
			cases, c, inWant = append(cases, c), flightCase{}, false
		case inWant:
			c.want = append(c.want, l)
		case l == "----":
			if c.command == "" {
				t.Fatalf("%s:%d: ---- with no command above it", path, i+1)
			}
			inWant = true
		case l == "" || strings.HasPrefix(l, "#"):
			c.comments = append(c.comments, l)
		case c.command != "":
			t.Fatalf("%s:%d: a second command before ----: %q", path, i+1, l)
		default:
			c.command, c.line = l, i+1
		}
	}
	if inWant {
		cases = append(cases, c)
	} else if c.command != "" {
		t.Fatalf("%s:%d: command %q has no ----", path, c.line, c.command)
	}
	return cases
}

// flightRun is one transcript's driver and what the runner last saw of it.
type flightRun struct {
	t      *testing.T
	d      *Driver
	pane   *fakeServer
	mend   func()
	acted  int               // pane actions already reported
	pasted map[string]string // message id → the text last pasted for it
	seen   map[string]string // what was last reported, by line key
}

func runFlightFile(t *testing.T, path string) {
	cases := parseFlightFile(t, path)
	r := &flightRun{t: t, pasted: map[string]string{}, seen: map[string]string{}}
	var out strings.Builder
	for _, c := range cases {
		got := r.do(path, c)
		for _, l := range c.comments {
			out.WriteString(l + "\n")
		}
		out.WriteString(c.command + "\n----\n" + strings.Join(got, "\n") + "\n\n")
		if os.Getenv("PANTTY_REWRITE") == "" && strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:%d: %s\n got:\n\t%s\nwant:\n\t%s", path, c.line, c.command,
				strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
		}
	}
	if os.Getenv("PANTTY_REWRITE") != "" {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// flightScreen is the screen a transcript names.
func flightScreen(name, text string) string {
	switch name {
	case "idle":
		return idleScreen
	case "busy":
		return busyScreen
	case "dialog":
		return dialogScreen
	case "blank":
		return "\n\n"
	case "box":
		return boxHolding(text)
	}
	return "unknown screen " + name
}

// do runs one command and reports what changed.
func (r *flightRun) do(path string, c flightCase) []string {
	t := r.t
	f := strings.Fields(c.command)
	rest := func(from int) string { return strings.Join(f[min(from, len(f)):], " ") }
	if f[0] != "driver" && r.d == nil {
		t.Fatalf("%s:%d: %q before any driver", path, c.line, c.command)
	}
	switch f[0] {
	case "driver":
		r.d, r.pane = idleDriver(t)
		if rest(1) == "box" {
			r.d.Ad = boxAdapter{}
		}
	case "screen":
		r.pane.show(flightScreen(f[1], rest(2)))
	case "react":
		r.pane.mu.Lock()
		if r.pane.react == nil {
			r.pane.react = map[string]string{}
		}
		r.pane.react[f[1]] = flightScreen(f[2], rest(3))
		r.pane.mu.Unlock()
	case "queue":
		queue(t, r.d, f[1], rest(2))
	case "boundary":
		submitNow(t, r.d)
	case "prompt", "forged":
		prompt := r.pasted[f[1]]
		if f[0] == "forged" {
			_, nonce, _, _ := guard.MatchHeader(prompt)
			prompt = strings.ReplaceAll(prompt, nonce, strings.Repeat("0", len(nonce)))
		}
		r.d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: time.Now(), File: "events/" + f[2] + ".json",
			Fields: hookwire.HookFields{SessionID: r.d.sess.ID, Prompt: prompt, PromptID: f[2]}})
	case "stop":
		r.d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(), File: "events/stop-" + f[1] + ".json",
			Fields: hookwire.HookFields{SessionID: r.d.sess.ID, PromptID: f[1], LastAssistantMessage: rest(2)}})
	case "silence":
		r.d.onEvidenceTimeout()
		answerWatches(t, r.d)
	case "writes":
		if f[1] == "broken" {
			r.mend = breakWrites(t, r.d)
		} else {
			r.mend()
		}
	case "state-retry":
		r.d.flushState()
	default:
		t.Fatalf("%s:%d: unknown command %q", path, c.line, c.command)
	}
	return r.changes()
}

// nonceRE matches a guard nonce (and nothing else a transcript prints).
var nonceRE = regexp.MustCompile(`[0-9a-f]{12}`)

// changes lists what happened since the last command, in a fixed order.
func (r *flightRun) changes() []string {
	var out []string
	acts := r.pane.did()
	for _, a := range acts[r.acted:] {
		if text, ok := strings.CutPrefix(a, "paste "); ok {
			if id, _, _, ok := guard.MatchHeader(text); ok {
				r.pasted[id] = text
			}
			a = "paste " + strings.ReplaceAll(nonceRE.ReplaceAllString(text, "N"), "\n", " / ")
		}
		out = append(out, "pane: "+a)
	}
	r.acted = len(acts)
	report := func(key, now string) {
		now = strings.ReplaceAll(now, r.d.S.Dir, "SEAT") // a temp directory: not the same twice
		if r.seen[key] != now {
			r.seen[key] = now
			out = append(out, key+": "+now)
		}
	}
	for _, e := range r.d.order {
		st, err := r.d.S.ReadStatus(e.Msg.ID)
		now := fmt.Sprintf("%s attempts=%d", st.State, st.Attempts)
		if err != nil {
			now = "unreadable"
		}
		if st.Reason != "" {
			now += " reason=" + st.Reason
		}
		if st.State == inbox.StateSubmitted || st.State == inbox.StateProcessed {
			now += " prompt=" + st.PromptID
		}
		report("status "+e.Msg.ID, now)
	}
	if c, err := r.d.S.CursorFile().Read(); err == nil {
		report("cursor", fmt.Sprintf("%s %s closed=%d", c.ID, c.State, c.Closed))
	}
	report("phase", string(r.d.phase))
	report("waiting", fmt.Sprintf("%q", r.d.waiting))
	if len(out) == 0 {
		out = []string{"(nothing)"}
	}
	return out
}
