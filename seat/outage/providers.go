package outage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// ReasonProviderRefusal is the reason on a message re-queued for a provider wait.
const ReasonProviderRefusal = "provider-refusal"

// localBlocks holds blocks this process could not record in providers.toml (a
// full disk, an unwritable home): the driver still honours them, so a failed
// write never turns a wait into a tight retry loop against the wall.
var (
	localMu     sync.Mutex
	localBlocks = state.Blocks{}
)

// ReadBlocks reads providers.toml (a missing file is no block) merged with the
// blocks this process could not write. An unreadable or corrupt file is an error.
func ReadBlocks(home string) (state.Blocks, error) {
	b, err := state.ProvidersFile(home).Read()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if b == nil {
		b = state.Blocks{}
	}
	localMu.Lock()
	defer localMu.Unlock()
	for p, l := range localBlocks {
		if cur, ok := b[p]; !ok || cur.Until.Before(l.Until) {
			b[p] = l
		}
	}
	return b, nil
}

// providersLockWait bounds how long a writer waits for another writer of
// providers.toml; writes take milliseconds.
const providersLockWait = 5 * time.Second

// lockProviders takes providers.toml's writer lock (a short flock beside
// it), waiting at most providersLockWait; unlock releases it.
func lockProviders(home string) (unlock func(), err error) {
	fl := flock.New(filepath.Join(home, "providers.lock"), flock.SetPermissions(fsatomic.FileMode))
	ctx, cancel := context.WithTimeout(context.Background(), providersLockWait)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock %s: %v", fl.Path(), err)
	}
	return func() { fl.Unlock() }, nil
}

// RecordBlock records a provider block in providers.toml under a short flock (so
// two seats refused at once both land), dropping entries that have expired. A
// block already recorded for the provider is only ever extended, never shortened
// by a later refusal with an earlier reset. On a write failure the block is still
// kept for this process (see localBlocks) and the error returned.
func RecordBlock(home, provider string, b state.Block, now time.Time) error {
	if !config.ValidProvider(provider) {
		return fmt.Errorf("provider name %q is not valid", provider)
	}
	localMu.Lock()
	localBlocks[provider] = b
	localMu.Unlock()
	unlock, err := lockProviders(home)
	if err != nil {
		return err
	}
	defer unlock()
	f := state.ProvidersFile(home)
	cur, err := f.Read()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Never replace a file we cannot read: a person has to look at it.
		return err
	}
	if cur == nil {
		cur = state.Blocks{}
	}
	for p, x := range cur {
		if !now.Before(x.Until) {
			delete(cur, p)
		}
	}
	if old, ok := cur[provider]; ok && old.Until.After(b.Until) {
		b.Until = old.Until
	}
	cur[provider] = b
	if err := f.Write(cur); err != nil {
		return err
	}
	localMu.Lock()
	delete(localBlocks, provider)
	localMu.Unlock()
	return nil
}

// ReleaseBlock removes provider's block from providers.toml (under the same
// flock as RecordBlock) when mine says it is one the caller may end: a
// block recorded from a prediction (a rate-limit note) that a later
// reading contradicts. A refusal's block is never released this way. It
// reports whether a block was removed.
func ReleaseBlock(home, provider string, mine func(state.Block) bool, now time.Time) (bool, error) {
	localMu.Lock()
	if l, ok := localBlocks[provider]; ok && mine(l) {
		delete(localBlocks, provider)
	}
	localMu.Unlock()
	unlock, err := lockProviders(home)
	if err != nil {
		return false, err
	}
	defer unlock()
	f := state.ProvidersFile(home)
	cur, err := f.Read()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return false, err
	}
	b, held := cur[provider]
	if !held || !now.Before(b.Until) || !mine(b) {
		return false, nil
	}
	delete(cur, provider)
	return true, f.Write(cur)
}

// RefusalBlock builds the block for a refused turn: its reset time read from the
// refusal text when it can be (ParseReset, capped by maxWait), otherwise the
// fixed re-probe interval.
func RefusalBlock(seatName, errName, text string, now time.Time, reprobe, maxWait time.Duration) state.Block {
	b := state.Block{Since: now.UTC(), Error: errName, Text: state.Truncate(fsatomic.OneLine(text), 300), Seat: seatName}
	if reset, ok := parseReset(text, now, time.Local, maxWait); ok {
		b.Until, b.Parsed = reset.UTC(), true
		return b
	}
	b.Until = now.Add(reprobe).UTC()
	return b
}

// ParseReset reads, opportunistically, when a provider's refusal ends from the
// text it came with. Vendors write it in many ways, and change them without
// notice, so five forms are understood and none is required:
//
//   - an ISO timestamp: "resets at 2026-01-02T15:04:05Z" (no zone: loc);
//   - a unix epoch in seconds or milliseconds: "limit reached|1767225600";
//   - a Retry-After interval in seconds: "retry-after: 120", "retry after 30 seconds";
//   - a relative duration: "resets in 2h 5m", "try again in 30 minutes";
//   - a wall-clock hour: "resets 3:45pm", "resets at 15:45", "resets 3pm (Europe/Paris)"
//     — the next such time at or after now, in the named zone, else loc; the
//     minute now is in is the end of that minute (the reset is inside it).
//
// The result is never before now and never more than MaxProviderWait after it
// (a misparse must not silence a seat for days). ok is false when no form is
// found: the caller then re-probes on a bounded fixed interval.
func ParseReset(text string, now time.Time, loc *time.Location) (time.Time, bool) {
	return parseReset(text, now, loc, config.MaxProviderWait)
}

var (
	isoRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?)\s*(Z|UTC|[+-]\d{2}:?\d{2})?`)
	})
	epochRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[^\d.:-])(\d{10}|\d{13})(?:$|[^\d.:])`) })
	retryRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\bretry[- ]after\b[:=\s]*(\d{1,6})\s*(?:s|sec|secs|seconds?)?\b`)
	})
	relRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\bin\s+((?:\d+(?:\.\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?|d|days?)\b[\s,]*(?:and\s+)?)+)`)
	})
	relPartRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?|d|days?)\b`)
	})
	clockRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:resets?|reset at|resets at|until|at)\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)\))?`)
	})
)

func parseReset(text string, now time.Time, loc *time.Location, maxWait time.Duration) (time.Time, bool) {
	if loc == nil {
		loc = time.Local
	}
	if maxWait <= 0 {
		maxWait = config.MaxProviderWait
	}
	t, ok := findReset(text, now, loc)
	if !ok {
		return time.Time{}, false
	}
	if t.Before(now) {
		t = now
	}
	if limit := now.Add(maxWait); t.After(limit) {
		t = limit
	}
	return t, true
}

func findReset(text string, now time.Time, loc *time.Location) (time.Time, bool) {
	if m := isoRE().FindStringSubmatch(text); m != nil {
		clock := m[2]
		if len(clock) == 5 {
			clock += ":00"
		}
		zone := loc
		switch z := m[3]; {
		case z == "Z" || strings.EqualFold(z, "UTC"):
			zone = time.UTC
		case z != "":
			z = strings.ReplaceAll(z, ":", "")
			h, _ := strconv.Atoi(z[1:3])
			mi, _ := strconv.Atoi(z[3:5])
			off := h*3600 + mi*60
			if z[0] == '-' {
				off = -off
			}
			zone = time.FixedZone(z, off)
		}
		if t, err := time.ParseInLocation("2006-01-02 15:04:05", m[1]+" "+clock, zone); err == nil {
			return t, true
		}
	}
	if m := epochRE().FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		if len(m[1]) == 13 {
			n /= 1000
		}
		// Only a plausible epoch (within a year of now) is a reset time; any other
		// ten-digit number is something else (an id, a byte count).
		if t := time.Unix(n, 0); t.After(now.AddDate(-1, 0, 0)) && t.Before(now.AddDate(1, 0, 0)) {
			return t, true
		}
	}
	if m := retryRE().FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		return now.Add(time.Duration(n) * time.Second), true
	}
	if m := relRE().FindStringSubmatch(text); m != nil {
		var d time.Duration
		for _, p := range relPartRE().FindAllStringSubmatch(m[1], -1) {
			f, _ := strconv.ParseFloat(p[1], 64)
			unit := time.Second
			switch strings.ToLower(p[2])[0] {
			case 'd':
				unit = 24 * time.Hour
			case 'h':
				unit = time.Hour
			case 'm':
				unit = time.Minute
			}
			d += time.Duration(f * float64(unit))
		}
		if d > 0 {
			return now.Add(d), true
		}
	}
	if m := clockRE().FindStringSubmatch(text); m != nil {
		h, _ := strconv.Atoi(m[1])
		mi := 0
		if m[2] != "" {
			mi, _ = strconv.Atoi(m[2])
		}
		ampm := strings.ToLower(m[3])
		if m[2] == "" && ampm == "" {
			return time.Time{}, false // a bare number ("at 3") is not a clock time
		}
		switch {
		case ampm == "" && h > 23, ampm != "" && (h < 1 || h > 12), mi > 59:
			return time.Time{}, false
		case ampm == "pm" && h != 12:
			h += 12
		case ampm == "am" && h == 12:
			h = 0
		}
		zone := loc
		if m[4] != "" {
			if z, err := time.LoadLocation(m[4]); err == nil {
				zone = z
			}
		}
		n := now.In(zone)
		t := time.Date(n.Year(), n.Month(), n.Day(), h, mi, 0, 0, zone)
		switch {
		case !t.Add(time.Minute).After(n):
			t = t.AddDate(0, 0, 1)
		case t.Before(n):
			// The minute named is running: the reset is inside it (Codex
			// words a reset seconds ahead "try again at 9:33 PM" at 9:33:48),
			// so its end, not the same minute tomorrow.
			t = t.Add(time.Minute)
		}
		return t, true
	}
	return time.Time{}, false
}
