package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
)

// WriteFunc writes a file atomically (temp file, fsync, rename, fsync dir).
type WriteFunc func(path string, data []byte) error

// Store is one seat's handoff/ directory.
type Store struct {
	Dir   string    // the seat's handoff/ directory
	Write WriteFunc // the caller's atomic writer
}

// Note is what a handoff carries: pantty's own resume pointers plus the seat's
// procedure notes. At is the only volatile field: it is left out of the hash.
type Note struct {
	Seat         string
	Session      string
	Generation   int
	Cursor       string   // the last message every earlier one is final up to
	InFlight     string   // the message between paste and turn end, if any
	Pending      []string // queued message ids, in order
	LastOutcomes []string // "id: state (reason)" of the latest final messages
	Procedure    string   // the seat's own notes (pantty handoff note)
	Reason       string   // why this handoff was materialized (compaction, pre-compact hook, …)
	At           time.Time
}

// volatileMark starts the one line the hash ignores.
const volatileMark = "Materialized at: "

// Render writes the note as the text that is re-injected into the seat.
func (n Note) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# pantty handoff for seat %s\n\n", n.Seat)
	fmt.Fprintf(&b, "%s%s\n", volatileMark, n.At.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Reason: %s\n", or(n.Reason, "unspecified"))
	fmt.Fprintf(&b, "Session: %s (generation %d)\n", n.Session, n.Generation)
	fmt.Fprintf(&b, "Cursor: %s\n", or(n.Cursor, "none yet"))
	fmt.Fprintf(&b, "In flight: %s\n", or(n.InFlight, "nothing"))
	fmt.Fprintf(&b, "Pending (%d): %s\n", len(n.Pending), or(strings.Join(n.Pending, ", "), "none"))
	b.WriteString("\n## Last outcomes\n\n")
	if len(n.LastOutcomes) == 0 {
		b.WriteString("- none yet\n")
	}
	for _, o := range n.LastOutcomes {
		fmt.Fprintf(&b, "- %s\n", o)
	}
	b.WriteString("\n## Procedure notes (written by the seat)\n\n")
	if strings.TrimSpace(n.Procedure) == "" {
		b.WriteString("(none)\n")
	} else {
		b.WriteString(strings.TrimRight(n.Procedure, "\n") + "\n")
	}
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// StableHash hashes a rendered note without its volatile lines, so two
// materializations of the same knowledge at different times hash alike.
func StableHash(text string) string {
	h := sha256.New()
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, volatileMark) {
			continue
		}
		h.Write([]byte(line))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Record is what one materialization produced.
type Record struct {
	Number  int    // the numbered file NNNN.md
	Path    string // its path
	Hash    string // StableHash of its text
	Changed bool   // the hash differs from the previous current handoff
	Text    string
}

// CurrentPath is handoff/current: a regular file (never a symlink) holding the
// latest materialized note, which the SessionStart hook injects.
func (s Store) CurrentPath() string { return filepath.Join(s.Dir, "current") }

// Materialize renders n, writes it as the next numbered note and as current,
// and reports whether it changed since the previous one. The numbered file is
// written first, so current never names knowledge that is not also in history.
func (s Store) Materialize(n Note) (Record, error) {
	if n.At.IsZero() {
		n.At = time.Now()
	}
	text := n.Render()
	rec := Record{Hash: StableHash(text), Text: text}
	prev, err := s.Current()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rec.Changed = true
	case err != nil:
		return rec, err
	default:
		rec.Changed = StableHash(prev) != rec.Hash
	}
	hist, err := s.History()
	if err != nil {
		return rec, err
	}
	rec.Number = 1
	if len(hist) > 0 {
		rec.Number = hist[len(hist)-1] + 1
	}
	rec.Path = filepath.Join(s.Dir, fmt.Sprintf("%04d.md", rec.Number))
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return rec, err
	}
	if err := s.Write(rec.Path, []byte(text)); err != nil {
		return rec, err
	}
	if err := s.Write(s.CurrentPath(), []byte(text)); err != nil {
		return rec, err
	}
	return rec, nil
}

// Current reads handoff/current; missing wraps fs.ErrNotExist.
func (s Store) Current() (string, error) {
	b, err := fsafe.ReadBounded(s.CurrentPath(), MaxCurrentBytes)
	return string(b), err
}

// MaxCurrentBytes bounds handoff/current when it is read back (it is printed
// into the harness's next request): the state pantty writes plus the notes.
const MaxCurrentBytes = 16 << 20

// History lists the numbers of the materialized notes, ascending.
func (s Store) History() ([]int, error) {
	ents, err := fsafe.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || len(base) != 4 {
			continue
		}
		if n, err := strconv.Atoi(base); err == nil {
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	return nums, nil
}

// notesDir holds the seat's own procedure notes, one file per note.
func (s Store) notesDir() string { return filepath.Join(s.Dir, "notes") }

// MaxNoteBytes bounds one procedure note.
const MaxNoteBytes = 64 << 10

// AddNote stores one procedure note from the seat (pantty handoff note). Each
// note is its own file named by time, so concurrent notes never overwrite.
func (s Store) AddNote(text string, now time.Time) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", errors.New("empty note")
	}
	if len(text) > MaxNoteBytes {
		return "", fmt.Errorf("note is %d bytes (at most %d)", len(text), MaxNoteBytes)
	}
	if err := os.MkdirAll(s.notesDir(), 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(s.notesDir(), fmt.Sprintf("%019d.md", now.UnixNano()))
	return path, s.Write(path, []byte(strings.TrimRight(text, "\n")+"\n"))
}

// Notes concatenates the procedure notes in the order they were written and
// returns the time of the newest (zero when there is none).
func (s Store) Notes() (string, time.Time, error) {
	ents, err := fsafe.ReadDir(s.notesDir())
	if err != nil {
		return "", time.Time{}, err
	}
	var b strings.Builder
	var newest time.Time
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok {
			continue
		}
		// A note pantty wrote is at most MaxNoteBytes; a link, a FIFO or a
		// larger file planted here is an error, never followed or waited on.
		data, err := fsafe.ReadBounded(filepath.Join(s.notesDir(), e.Name()), MaxNoteBytes+4096)
		if err != nil {
			return "", time.Time{}, err
		}
		if ns, err := strconv.ParseInt(base, 10, 64); err == nil {
			newest = time.Unix(0, ns)
		}
		b.Write(data)
	}
	return b.String(), newest, nil
}
