package seat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Command is an adapter-authored harness command from the adapter's allow-list:
// the command door. It is a different type from Submission, built by a different
// function from different input, so no board text can become one.
type Command struct {
	name string
	args string
}

// Name is the command without its sigil ("compact").
func (c Command) Name() string { return c.name }

// Args is the command's single-line argument text.
func (c Command) Args() string { return c.args }

// Text is what is typed into the pane: "/name args".
func (c Command) Text() string {
	if c.args == "" {
		return "/" + c.name
	}
	return "/" + c.name + " " + c.args
}

// NewCommand builds a command the adapter allows, or refuses. Arguments are one
// line of printable text: a newline would submit a second input.
func NewCommand(a Adapter, name, args string) (Command, error) {
	name = strings.TrimPrefix(name, "/")
	allowed := false
	for _, n := range a.Commands() {
		allowed = allowed || n == name
	}
	if !allowed {
		return Command{}, fmt.Errorf("%w: command %q is not in the %s adapter's allow-list (%s)",
			ErrBadInput, "/"+name, a.Name(), "/"+strings.Join(a.Commands(), ", /"))
	}
	if args = strings.TrimSpace(args); args != "" && bare(a, name) {
		return Command{}, fmt.Errorf("%w: the %s harness's /%s takes no arguments (text after it turns the line into a prompt for the model)",
			ErrBadInput, a.Name(), name)
	}
	if len(args) > 4096 {
		return Command{}, fmt.Errorf("%w: command arguments are %d bytes (at most 4096)", ErrBadInput, len(args))
	}
	for i, r := range args {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) && r != ' ' {
			return Command{}, fmt.Errorf("%w: command arguments: unprintable character %U at byte %d", ErrBadInput, r, i)
		}
	}
	return Command{name: name, args: strings.TrimSpace(args)}, nil
}

// BareCommands is an optional Adapter method: the allow-listed commands that
// take no arguments in this harness. Text after one of them is not an argument
// there: the whole line becomes a prompt for the model (measured on Codex
// 0.171.0: "/compact keep X" reached the model as a turn and compacted
// nothing), so NewCommand refuses arguments for them.
type BareCommands interface {
	BareCommands() []string
}

// bare reports whether the adapter's command name takes no arguments.
func bare(a Adapter, name string) bool {
	b, ok := a.(BareCommands)
	if !ok {
		return false
	}
	for _, n := range b.BareCommands() {
		if n == name {
			return true
		}
	}
	return false
}

// CommandAnswers is an optional Adapter method: the harness's own answer to a
// command the door sent at or after since, as the harness recorded it, with
// ok=false while it has recorded none. Claude Code 2.1.328 records a local
// command's output in its transcript (a "local_command" row holding
// "<local-command-stdout>Not enough messages to compact.</local-command-stdout>",
// measured 2026-12-03), about 140 ms after the command. The driver uses it to
// tell a refused command from an accepted one within seconds instead of waiting
// out a timeout (docs/claude-code.md).
type CommandAnswers interface {
	CommandAnswer(s Seat, c Config, sessionID string, cmd Command, since time.Time) (answer string, ok bool, err error)
}

// answerTail bounds how much of a transcript's end LocalCommandAnswer reads: the
// answer was written seconds ago, and transcripts grow to many megabytes.
const answerTail = 1 << 20

// LocalCommandAnswer finds, in a transcript in Claude Code's JSONL form (the
// simulator writes the same rows), the output of the local command name run at
// or after since: the first "<local-command-stdout>" row after a row naming
// "<command-name>/name</command-name>", or one whose commandRun names it. The
// answer is the output's text without terminal escapes. Only the file's last
// answerTail bytes are read.
func LocalCommandAnswer(path, name string, since time.Time) (string, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	off := max(0, fi.Size()-answerTail)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return "", false, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), answerTail+1)
	if off > 0 {
		sc.Scan() // a partial line
	}
	named := false
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte("command-name>")) && !bytes.Contains(line, []byte("local-command-stdout>")) {
			continue
		}
		var r struct {
			Timestamp  time.Time       `json:"timestamp"`
			Content    json.RawMessage `json:"content"`
			CommandRun *struct {
				Command string `json:"command"`
			} `json:"commandRun"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &r) != nil || r.Timestamp.Before(since) {
			continue
		}
		var text string
		if json.Unmarshal(r.Content, &text) != nil {
			json.Unmarshal(r.Message.Content, &text)
		}
		if strings.Contains(text, "<command-name>/"+name+"</command-name>") {
			named = true
			continue
		}
		out, ok := between(text, "<local-command-stdout>", "</local-command-stdout>")
		if ok && (named || r.CommandRun != nil && r.CommandRun.Command == name) {
			return strings.TrimSpace(ansiRE.ReplaceAllString(out, "")), true, nil
		}
	}
	return "", false, sc.Err()
}

// ansiRE matches the terminal escapes a command's recorded output keeps.
var ansiRE = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

func between(s, open, end string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	in, _, _ := strings.Cut(rest, end)
	return in, true
}
