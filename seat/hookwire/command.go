package hookwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

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
			return strings.TrimSpace(ansiRE().ReplaceAllString(out, "")), true, nil
		}
	}
	return "", false, sc.Err()
}

// ansiRE matches the terminal escapes a command's recorded output keeps.
var ansiRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]") })

func between(s, open, end string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	in, _, _ := strings.Cut(rest, end)
	return in, true
}

// Timers of the command door (docs/state.md lists every timer with its reason).
const (
	// DefaultCommandWait is how long a command may wait for the seat to be free
	// (no turn running, an empty input box) before it is refused unsent. A
	// request's own Wait (`--wait`) replaces it.
	DefaultCommandWait = 60 * time.Second
	// CommandAcceptWindow bounds the wait for the harness to take a command after
	// the paste. Measured 2026-12-03: PreCompact came 130 ms after /compact on
	// Claude Code 2.1.328 and 230 ms after it on Codex 0.171.0, and Claude's
	// refusal ("Not enough messages to compact.") was in its transcript 140 ms
	// after it; ten seconds leaves room for a loaded machine.
	CommandAcceptWindow = 10 * time.Second
)
