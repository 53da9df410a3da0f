package main

// The conventions a new user expects of a CLI, run on the real binary.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

func TestVersionNamesTheMeasuredHarnesses(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ver")
	r := h.Run("--version")
	for _, want := range []string{"pantty ", "claude-code", "2.1.328", "codex", "0.171.0", "sim", "revisit"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("--version: %q missing: %s", want, r)
		}
	}
}

func TestUnknownCommandsExit2(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "unk")
	for _, args := range [][]string{{"frobnicate"}, {"seat", "frobnicate"}, {"help", "frobnicate"}} {
		r := h.Run(args...)
		if r.Code != 2 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "unknown command") ||
			strings.Contains(r.Stderr, "did you mean") {
			t.Errorf("pantty %s: want exit 2 and one 'unknown command' line without a guess; got %s", strings.Join(args, " "), r)
		}
	}
}

// TestNearMissCommandsNameTheCommand: a typo gets the command it was probably
// meant to be, whole, so the correction pastes and runs.
func TestNearMissCommandsNameTheCommand(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "near")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, "pantty status"},
		{[]string{"seat", "sned", "near"}, "pantty seat send"},
		{[]string{"seat", "lsit"}, "pantty seat list"},
		{[]string{"handoff", "shwo", "near"}, "pantty handoff show"},
		{[]string{"recover", "instal", "--cron"}, "pantty recover install"},
		{[]string{"help", "seat", "inbx"}, "pantty seat inbox"},
	} {
		r := h.Run(c.args...)
		if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "did you mean '"+c.want+"'?") {
			t.Errorf("pantty %s: want exit 2 and did you mean '%s'; got %s", strings.Join(c.args, " "), c.want, r)
		}
	}
	if d := editDistance("stauts", "status"); d != 1 {
		t.Errorf("a swap of two neighbours counts %d, want 1", d)
	}
}

// TestNearMissFlagsNameTheLine: a flag typo gets the line as typed with the
// nearest flag of that command (or a global one) in its place, and that line
// pastes and runs; a flag near none names the command's --help.
func TestNearMissFlagsNameTheLine(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "nearflag")
	bin := t.TempDir()
	if err := os.Symlink(h.Bin, filepath.Join(bin, "pantty")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--jsn"}, "pantty status --json"},
		{[]string{"seat", "send", "nearflag", "--idd", "m1"}, "pantty seat send nearflag --id m1"},
		{[]string{"seat", "list", "--hme=" + h.Home}, "pantty seat list --home=" + h.Home},
		{[]string{"--hme", h.Home, "status"}, "pantty --home " + h.Home + " status"},
		{[]string{"seat", "inbox", "nearflag", "--jsno"}, "pantty seat inbox nearflag --json"},
		{[]string{"seat", "send", "nearflag", "-x"}, "pantty seat send --help"},
	} {
		r := h.RunStdin("hello", c.args...)
		hint, _, _ := strings.Cut(r.Stderr[strings.Index(r.Stderr, "'")+1:], "'")
		if r.Code != 2 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || hint != c.want {
			t.Errorf("pantty %s: want exit 2 and one line with '%s'; got %s", strings.Join(c.args, " "), c.want, r)
			continue
		}
		cmd := exec.Command("sh", "-c", hint)
		cmd.Env = append(h.Env(), "PATH="+bin+":/usr/bin:/bin")
		cmd.Stdin = strings.NewReader("hello")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the hint %q does not run: %v: %s", hint, err, out)
		}
	}
}

// TestASeatNamedHIsASeat: "h" and "help" after a verb that takes a seat are
// the seat's name, not urfave/cli's help verb (which printed the help and
// exited 0 without removing anything).
func TestASeatNamedHIsASeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "h")
	if r := h.Run("status", "h"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "h\n  harness") {
		t.Errorf("pantty status h: want seat h's readings; got %s", r)
	}
	if r := h.Run("seat", "rm", "help"); r.Code != exitNotFound || r.Stdout != "" {
		t.Errorf("pantty seat rm help: want exit 5 for no seat help; got %s", r)
	}
	if r := h.Run("seat", "rm", "h"); r.Code != 0 || !strings.Contains(r.Stdout, "seat h removed") {
		t.Errorf("pantty seat rm h: want seat h removed; got %s", r)
	}
	if r := h.Run("seat", "help"); r.Code != 0 || !strings.Contains(r.Stdout, "pantty seat - ") {
		t.Errorf("pantty seat help: want the group's help; got %s", r)
	}
}

// TestHelpAndVersionVerbs: `pantty help [COMMAND...]` and `pantty version` are
// the flags' verb forms, exit 0, on stdout.
func TestHelpAndVersionVerbs(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "verbs")
	if r, flag := h.Run("version"), h.Run("--version"); r.Code != 0 || r.Stdout != flag.Stdout || !strings.Contains(r.Stdout, "claude-code") {
		t.Errorf("pantty version: want --version's output, exit 0; got %s", r)
	}
	if r, flag := h.Run("help"), h.Run("--help"); r.Code != 0 || r.Stdout != flag.Stdout || !strings.Contains(r.Stdout, "seat") {
		t.Errorf("pantty help: want --help's output, exit 0; got %s", r)
	}
	if r, flag := h.Run("help", "seat", "send"), h.Run("seat", "send", "--help"); r.Code != 0 || r.Stdout != flag.Stdout || !strings.Contains(r.Stdout, "--wait") {
		t.Errorf("pantty help seat send: want seat send --help's output, exit 0; got %s", r)
	}
	if r, flag := h.Run("--home", h.Home, "help", "seat"), h.Run("seat", "--help"); r.Code != 0 || r.Stdout != flag.Stdout {
		t.Errorf("pantty --home DIR help seat: want seat --help's output, exit 0; got %s", r)
	}
	if r := h.Run("--help"); !regexp.MustCompile(`(?m)^   help +print the help`).MatchString(r.Stdout) {
		t.Errorf("pantty --help does not list help among its commands: %s", r)
	}
}

func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "glob")
	elsewhere := filepath.Join(t.TempDir(), "empty")
	r := h.RunEnv(map[string]string{"PANTTY_HOME": elsewhere}, "", "seat", "list", "--json", "--home", h.Home)
	var list struct {
		V     int
		Home  string
		Seats []struct {
			Seat, ConfigError                      string
			Harness, Intent, Owner, Phase, Session *string
			PhaseStale                             bool `json:"phase_stale"`
			Queued                                 *int
		}
	}
	decodeStrict(t, r.Stdout, &list)
	if r.Code != 0 || list.V != 1 || list.Home != h.Home || len(list.Seats) != 1 || list.Seats[0].Seat != "glob" ||
		*list.Seats[0].Harness != "sim" || list.Seats[0].Owner != nil || *list.Seats[0].Queued != 0 {
		t.Fatalf("seat list --json --home after the command: %s", r)
	}
	if r := h.RunEnv(map[string]string{"PANTTY_HOME": elsewhere}, "x", "seat", "send", "glob", "--home="+h.Home, "--id", "g1"); r.Code != 0 {
		t.Fatalf("--home= after the seat name: %s", r)
	}
	r = h.Run("seat", "inbox", "glob", "--json")
	var inbox struct {
		V        int
		Seat     string
		Messages []struct {
			ID, State, Reason, From, Board, Channel string
			Attempts, Resubmits, Retries, Bytes     int
			ReplyBytes                              int        `json:"reply_bytes"`
			EnqueuedAt                              time.Time  `json:"enqueued_at"`
			SubmittedAt                             *time.Time `json:"submitted_at"`
			EndedAt                                 *time.Time `json:"ended_at"`
		}
	}
	decodeStrict(t, r.Stdout, &inbox)
	if r.Code != 0 || inbox.V != 1 || len(inbox.Messages) != 1 || inbox.Messages[0].ID != "g1" || inbox.Messages[0].State != "queued" || inbox.Messages[0].Bytes != 1 {
		t.Fatalf("seat inbox --json: %s", r)
	}
	r = h.Run("recover", "--dry-run", "--json")
	var rep struct{ V int }
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.V != 1 {
		t.Fatalf("recover --json carries no \"v\":1: %v %s", err, r)
	}
}

func TestCompletionAndManAreGeneratedFromTheCommands(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "comp")
	// bash and zsh ask the binary itself at each TAB.
	r := h.Run("seat", "--generate-bash-completion")
	for _, want := range []string{"send", "show", "inbox"} {
		if !strings.Contains(r.Stdout, want+"\n") {
			t.Fatalf("seat completion lacks %q: %s", want, r)
		}
	}
	if r := h.Run("--generate-bash-completion"); !strings.Contains(r.Stdout, "events\n") || !strings.Contains(r.Stdout, "completion\n") {
		t.Fatalf("top-level completion: %s", r)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := h.Run("completion", sh)
		if r.Code != 0 || !strings.Contains(r.Stdout, "pantty") {
			t.Fatalf("completion %s: %s", sh, r)
		}
		if sh == "bash" {
			if b, err := exec.Command("bash", "-n", "-c", r.Stdout).CombinedOutput(); err != nil {
				t.Fatalf("the bash script does not parse: %v %s", err, b)
			}
		}
		if sh == "fish" && (!strings.Contains(r.Stdout, "events") || !strings.Contains(r.Stdout, "-l wait")) {
			t.Fatalf("fish completion lacks commands or flags: %s", r.Stdout)
		}
	}
	if r := h.Run("completion", "tcsh"); r.Code != 2 {
		t.Fatalf("completion tcsh: want exit 2, got %s", r)
	}
	r = h.Run("man")
	for _, want := range []string{".TH pantty 1", "events", "--wait", "seat"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("man page lacks %q: %s", want, r.Stderr)
		}
	}
}

// TestBashCompletionOnABareBash: the script works without the bash-completion
// package (bash --norc: no _get_comp_words_by_ref, no _init_completion), and
// TAB after a command that takes a seat NAME offers the seats that exist.
func TestBashCompletionOnABareBash(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	h := seattest.New(t, "reviewer")
	bin := t.TempDir()
	if err := os.Symlink(h.Bin, filepath.Join(bin, "pantty")); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) (string, string) {
		t.Helper()
		script := "source <(pantty completion bash)\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" +
			fmt.Sprint(len(words)-1) + "\n_pantty_complete\necho \"${COMPREPLY[*]}\""
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PANTTY_HOME=" + h.Home}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash: %v: %s", err, stderr.String())
		}
		return strings.TrimSpace(string(out)), stderr.String()
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"pantty", "seat", "sen"}, "send"},
		{[]string{"pantty", "seat", "send", "rev"}, "reviewer"},
		{[]string{"pantty", "status", `""`}, "reviewer"},
		{[]string{"pantty", "seat", "send", "reviewer", "--wa"}, "--wait"},
	} {
		if got, stderr := complete(c.words...); got != c.want || stderr != "" {
			t.Errorf("TAB after %v: got %q (stderr %q), want %q", c.words, got, stderr, c.want)
		}
	}
	// A completed word ends with a space, as in other commands: "pantty
	// se<TAB>" must not run into the next word typed.
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", "source <(\""+h.Bin+"\" completion bash)\ncomplete -p pantty").Output()
	if err != nil || !strings.Contains(string(out), "_pantty_complete") || strings.Contains(string(out), "nospace") {
		t.Errorf("the completion's options: %q (%v), want no nospace", out, err)
	}
}
