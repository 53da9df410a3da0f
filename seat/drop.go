package seat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
)

// The drop directory is how a seat's own model reaches its driver when OS
// isolation is on: the sandboxed shell cannot read or write $PANTTY_HOME, so
// `pantty handoff note` and `pantty handoff request` run from inside write one
// request file here (DropEnv names it), and the seat's driver, which runs
// outside the sandbox, reads it, validates it and acts for this seat only. The
// directory is per seat and granted to that seat's sandbox alone, so what
// arrives in it came from this seat (or from outside every sandbox).

// Drop request kinds.
const (
	DropNote    = "note"    // text for the next handoff (pantty handoff note)
	DropRefresh = "refresh" // a compaction cycle at the next boundary (pantty handoff request)
)

// maxDropBytes bounds one request file: a note's maximum plus its TOML framing.
const maxDropBytes = handoff.MaxNoteBytes + 4096

// DropRequest is one request file, <id>.req in the drop directory.
type DropRequest struct {
	Kind string    `toml:"kind"`
	Text string    `toml:"text,omitempty"`
	At   time.Time `toml:"at"`
}

// DropAnswer is the driver's answer, <id>.done beside the request.
type DropAnswer struct {
	OK     bool      `toml:"ok"`
	Error  string    `toml:"error,omitempty"`
	Detail string    `toml:"detail,omitempty"`
	At     time.Time `toml:"at"`
}

// dropTimeout bounds how long a command from inside waits for the driver.
const dropTimeout = 30 * time.Second

// SendDrop writes a request into the drop directory dir (from inside the seat)
// and waits for the driver's answer. A driver that does not answer in time
// leaves the request queued: it is taken when the seat's driver next runs, and
// the caller is told so (ErrUnobservable).
func SendDrop(dir string, r DropRequest) (DropAnswer, error) {
	if r.Kind == DropNote {
		if err := ValidateNote(r.Text); err != nil {
			return DropAnswer{}, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	r.At = time.Now().UTC()
	id := strings.TrimPrefix(newRequestID(), "c")
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(r); err != nil {
		return DropAnswer{}, err
	}
	done := DropAnswerFile(dir, id)
	ans, err := awaitFile(done, dropTimeout, func() error {
		// Written under a dot name and renamed: the driver takes only whole .req files.
		return fsatomic.WriteFile(dir, filepath.Join(dir, id+".req"), b.Bytes())
	})
	if errors.Is(err, errNoAnswer) {
		return ans, fmt.Errorf("%w: the seat's driver did not answer within %s; the request stays queued in %s", ErrUnobservable, dropTimeout, dir)
	}
	if err == nil {
		os.Remove(filepath.Join(dir, id+".done"))
		if !ans.OK && r.Kind == DropNote {
			return ans, fmt.Errorf("%w: refused by the seat's driver: %s", ErrBadInput, ans.Error)
		}
		if !ans.OK {
			// As `handoff request` outside isolation: the driver's refusal is a failure (1).
			return ans, fmt.Errorf("refused by the seat's driver: %s", ans.Error)
		}
	}
	return ans, err
}

// ReadDrop reads one request file without following a symlink (a planted link
// must not make the driver read another file) and within maxDropBytes.
func ReadDrop(path string) (DropRequest, error) {
	var r DropRequest
	data, err := fsafe.ReadBounded(path, maxDropBytes)
	if err != nil {
		return r, err
	}
	md, err := toml.Decode(string(data), &r)
	if err != nil {
		return r, err
	}
	if un := md.Undecoded(); len(un) > 0 {
		return r, fmt.Errorf("unknown key %q", un[0].String())
	}
	switch r.Kind {
	case DropNote:
		return r, ValidateNote(r.Text)
	case DropRefresh:
		return r, nil
	}
	return r, fmt.Errorf("kind %q: want %s or %s", r.Kind, DropNote, DropRefresh)
}

// PendingDrops lists the request files waiting in dir, oldest name first.
func PendingDrops(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".req") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out, nil
}
