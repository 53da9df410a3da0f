// Package sim is a deterministic stand-in for Claude Code's terminal UI and
// model, so that pantty can be tested and demonstrated end to end with no API
// key and no network.
//
// It is a test and demo double, not a harness: it reproduces only the
// behaviours of Claude Code 2.1.x that pantty depends on (bracketed paste,
// the paste commit window, Enter/Escape semantics, sigil dispatch, hook
// processes with Claude-shaped JSON payloads, transcripts, the status line
// and a token model), and it does them for real: real terminal I/O in a real
// pty, real hook processes, real files. Every request that reaches the
// simulated model is recorded in a request log so tests can count delivery.
//
// The lead wires Main as the hidden subcommand `pantty sim`; docs/sim.md is
// the user-facing description of every flag, variable and marker.
package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Version is what the simulator reports as its own version (status line
// payload, transcripts, --version), so records show that no real harness
// produced them.
const Version = "sim-0.1"

// simConfig is everything Main learns from flags and the environment.
type simConfig struct {
	stateDir string
	startup  time.Duration
	// box is how long after its SessionStart the simulator draws its input
	// box and takes keys (PANTTY_SIM_BOX): Claude Code fires SessionStart
	// about 260 ms before its box (measured), and a driver must look for it.
	box       time.Duration
	commit    time.Duration
	submit    time.Duration
	turn      time.Duration
	esc       time.Duration
	idle      time.Duration
	sigils    string
	mentions  bool
	floor     int
	window    int
	failStart bool
	// dialog opens a modal dialog in place of the input box at start-up
	// (PANTTY_SIM_DIALOG; dialog.go): "start" right after SessionStart (Claude
	// Code's post-upgrade question), "before" ahead of it, SessionStart
	// firing only once it is answered (Claude Code's folder-trust question).
	dialog string
	// stubborn: SIGHUP, SIGTERM and a closed terminal do not end the
	// simulator (PANTTY_SIM_STUBBORN=1), like Gemini CLI 0.61.0 after its
	// tmux server died (docs/sim.md): only SIGKILL does.
	stubborn bool
	// broken names harness behaviours switched off (PANTTY_SIM_BROKEN), so
	// a measurement can show it fails when the harness lacks what it
	// measures: escape (Escape does nothing mid-turn), reinject (no
	// SessionStart after a compaction: nothing re-injected), cumulative (the
	// status line reports the session's cumulative input as the current
	// usage).
	broken         map[string]bool
	model          string
	sessionID      string
	resume         bool
	print          bool
	outputFormat   string
	permissionMode string
	skipPerms      bool
	settings       settings
	prompt         string // positional arguments, joined
	cwd            string
}

// usageError is a command-line mistake: Claude exits 2 on those, before
// doing anything.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Main runs the simulator with args (without the program name) and returns
// the process exit code. It exists so that `pantty sim` and the package's
// own tests can run the same code in a real tmux pane.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 2
		}
		if errors.Is(err, errHelp) {
			fmt.Fprint(stdout, helpText)
			return 0
		}
		if errors.Is(err, errVersion) {
			fmt.Fprintf(stdout, "%s (pantty sim, a Claude Code test double)\n", Version)
			return 0
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	if cfg.failStart {
		fmt.Fprintln(stderr, "sim: PANTTY_SIM_FAIL_START=1: failing at start-up")
		return 1
	}
	e, err := newEngine(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if cfg.print {
		return runPrint(e, stdin, stdout, stderr)
	}
	return runInteractive(e, stdin, stdout, stderr)
}

// runInteractive puts the terminal in raw mode (when stdin is one), runs the
// TUI event loop and restores the terminal whatever happens.
func runInteractive(e *engine, stdin io.Reader, stdout, stderr io.Writer) int {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			fmt.Fprintf(stderr, "sim: raw mode: %v\n", err)
			return 1
		}
		defer term.Restore(int(f.Fd()), old)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	u := newTUI(e, stdout)
	if f, ok := stdout.(*os.File); ok {
		u.sizeFd = int(f.Fd())
	}
	code := u.run(readInput(stdin), sigs)
	// Leave the terminal as we found it: bracketed paste off, cursor below.
	io.WriteString(stdout, "\x1b[?2004l\r\n")
	return code
}

// readInput turns stdin into a channel of chunks so the event loop can wait
// on keystrokes, timers and signals at once. The channel closes on EOF or a
// read error (the pty went away).
func readInput(r io.Reader) <-chan []byte {
	ch := make(chan []byte, 256)
	go func() {
		defer close(ch)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				ch <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

var (
	errHelp    = errors.New("help")
	errVersion = errors.New("version")
	uuidRe     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	})
)

const helpText = `Usage: pantty sim [options] [prompt]

A deterministic Claude Code stand-in for tests and demos (not a harness).

Options:
  --settings FILE|JSON          hooks and statusLine, Claude Code shape
  --session-id UUID             start a new session with this id
  -r, --resume UUID             resume a session from its transcript
  --model M                     model name to report (default sim-1)
  -p, --print                   non-interactive: one turn, prompt from stdin
  --output-format text|json     output of --print (default text)
  --permission-mode MODE        accepted and recorded
  --dangerously-skip-permissions  accepted
  --verbose                     accepted, ignored
  -v, --version                 print the version

Environment: see docs/sim.md (PANTTY_SIM_*).
`

// parseArgs reads Claude Code's flag names (both "--x v" and "--x=v") and
// the PANTTY_SIM_* environment. A hand-written parser, because Claude mixes
// positional prompts and flags in any order, which package flag does not.
func parseArgs(args []string) (*simConfig, error) {
	cfg := &simConfig{model: "sim-1", outputFormat: "text", permissionMode: "default"}
	var positional []string
	var settingsArg, resumeID string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", usageError{fmt.Sprintf("option '%s' argument missing", name)}
			}
			i++
			return args[i], nil
		}
		noValue := func() error {
			if hasVal {
				return usageError{fmt.Sprintf("option '%s' takes no argument", name)}
			}
			return nil
		}
		var err error
		switch name {
		case "--settings":
			settingsArg, err = value()
		case "--session-id":
			cfg.sessionID, err = value()
		case "-r", "--resume":
			resumeID, err = value()
		case "--model":
			cfg.model, err = value()
		case "-p", "--print":
			err = noValue()
			cfg.print = true
		case "--output-format":
			cfg.outputFormat, err = value()
			if err == nil && cfg.outputFormat != "text" && cfg.outputFormat != "json" {
				err = usageError{fmt.Sprintf("--output-format %q is not supported by the simulator (text, json)", cfg.outputFormat)}
			}
		case "--permission-mode":
			cfg.permissionMode, err = value()
		case "--dangerously-skip-permissions":
			err = noValue()
			cfg.skipPerms = true
		case "--verbose":
			err = noValue()
		case "-h", "--help":
			return nil, errHelp
		case "-v", "--version":
			return nil, errVersion
		default:
			return nil, usageError{fmt.Sprintf("unknown option '%s'", name)}
		}
		if err != nil {
			return nil, err
		}
	}
	cfg.prompt = strings.Join(positional, " ")
	if cfg.sessionID != "" && resumeID != "" {
		return nil, usageError{"--session-id and --resume cannot be combined"}
	}
	if resumeID != "" {
		cfg.sessionID, cfg.resume = resumeID, true
	}
	if cfg.sessionID != "" && !uuidRe().MatchString(cfg.sessionID) {
		//lint:ignore ST1005 the simulator prints Claude Code's own message, word for word
		return nil, fmt.Errorf("Invalid session ID %q. Must be a valid UUID.", cfg.sessionID)
	}
	if cfg.sessionID == "" {
		cfg.sessionID = newUUID()
	}
	if settingsArg != "" {
		s, err := loadSettings(settingsArg)
		if err != nil {
			return nil, err
		}
		cfg.settings = s
	}
	if err := readEnv(cfg); err != nil {
		return nil, usageError{err.Error()}
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cfg.cwd = wd
	return cfg, nil
}

// loadSettings accepts a path or, like Claude, an inline JSON object.
func loadSettings(arg string) (settings, error) {
	var s settings
	data := []byte(arg)
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		b, err := os.ReadFile(arg)
		if err != nil {
			return s, fmt.Errorf("settings: %w", err)
		}
		data = b
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("settings %s: %w", arg, err)
	}
	return s, nil
}

// readEnv applies the PANTTY_SIM_* variables; every timing goes through
// time.ParseDuration so tests can shrink them.
func readEnv(cfg *simConfig) error {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	cfg.stateDir = envOr("PANTTY_SIM_STATE", filepath.Join(home, ".pantty-sim"))
	if abs, err := filepath.Abs(cfg.stateDir); err == nil {
		cfg.stateDir = abs
	}
	durs := []struct {
		name string
		def  time.Duration
		dst  *time.Duration
	}{
		{"PANTTY_SIM_STARTUP", 300 * time.Millisecond, &cfg.startup},
		{"PANTTY_SIM_BOX", 0, &cfg.box},
		{"PANTTY_SIM_COMMIT", 30 * time.Millisecond, &cfg.commit},
		{"PANTTY_SIM_SUBMIT", 0, &cfg.submit},
		{"PANTTY_SIM_TURN", 200 * time.Millisecond, &cfg.turn},
		{"PANTTY_SIM_ESC", 30 * time.Millisecond, &cfg.esc},
		{"PANTTY_SIM_IDLE", 60 * time.Second, &cfg.idle},
	}
	for _, d := range durs {
		*d.dst = d.def
		if v := os.Getenv(d.name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p < 0 {
				return fmt.Errorf("%s=%q: want a duration like 200ms", d.name, v)
			}
			*d.dst = p
		}
	}
	cfg.sigils = envOr("PANTTY_SIM_SIGILS", "/!")
	cfg.mentions = os.Getenv("PANTTY_SIM_MENTIONS") != "0"
	cfg.failStart = os.Getenv("PANTTY_SIM_FAIL_START") == "1"
	switch v := os.Getenv("PANTTY_SIM_DIALOG"); v {
	case "", "start", "before":
		cfg.dialog = v
	default:
		return fmt.Errorf("PANTTY_SIM_DIALOG=%q: want start or before", v)
	}
	cfg.stubborn = os.Getenv("PANTTY_SIM_STUBBORN") == "1"
	cfg.broken = map[string]bool{}
	for _, b := range strings.Split(os.Getenv("PANTTY_SIM_BROKEN"), ",") {
		switch b = strings.TrimSpace(b); b {
		case "":
		case "escape", "reinject", "cumulative":
			cfg.broken[b] = true
		default:
			return fmt.Errorf("PANTTY_SIM_BROKEN=%q: %q is not one of escape, reinject, cumulative", os.Getenv("PANTTY_SIM_BROKEN"), b)
		}
	}
	ints := []struct {
		name string
		def  int
		dst  *int
	}{
		{"PANTTY_SIM_FLOOR", 12000, &cfg.floor},
		{"PANTTY_SIM_WINDOW", 200000, &cfg.window},
	}
	for _, n := range ints {
		*n.dst = n.def
		if v := os.Getenv(n.name); v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 {
				return fmt.Errorf("%s=%q: want a non-negative integer", n.name, v)
			}
			*n.dst = p
		}
	}
	if cfg.window <= 0 {
		cfg.window = 1
	}
	return nil
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
