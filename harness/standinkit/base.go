package standinkit

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configure a stand-in. The zero value is usable.
type Options struct {
	// Addr is the listen address; default 127.0.0.1:0 (a free loopback port).
	Addr string
	// LogPath, when set, receives every request as one JSON line too.
	LogPath string
	// KeepBodies keeps each request's raw body in the log (for measuring a new
	// client version; bodies are large).
	KeepBodies bool
	// ChunkDelay is the pause between streamed chunks of an ordinary reply.
	ChunkDelay time.Duration
	// Logf receives a line for each unknown path and each scripted answer.
	Logf func(format string, args ...any)
}

// Base is what every stand-in server shares, whatever API it imitates: the
// switchable loopback listener (faults, refused connections), the request
// log of rows R, and the queue of scripted replies. A stand-in embeds it
// and adds only its API's wire format.
type Base[R any] struct {
	Opts Options
	sw   *Switch
	log  *Log[R]

	mu    sync.Mutex
	queue []Reply
}

// startBase opens the log and serves h; the caller sets its embedded Base
// to the result before handing out URL (h may run only after that).
func startBase[R any](opts Options, h http.Handler) (*Base[R], error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	log, err := OpenLog[R](opts.LogPath)
	if err != nil {
		return nil, err
	}
	sw, err := NewSwitch(opts.Addr, h)
	if err != nil {
		log.Close()
		return nil, err
	}
	return &Base[R]{Opts: opts, sw: sw, log: log}, nil
}

// Embed starts a Base serving h and sets *base, the field of s that embeds
// it, before any request can reach h: a stand-in's Start in one call.
func Embed[S, R any](s *S, base **Base[R], opts Options, h http.Handler) (*S, error) {
	b, err := startBase[R](opts, h)
	if err != nil {
		return nil, err
	}
	*base = b
	return s, nil
}

// URL is the stand-in's root (no trailing slash).
func (b *Base[R]) URL() string { return "http://" + b.sw.Addr() }

// SetFault switches an outage on (FaultNone clears it): see Switch.
func (b *Base[R]) SetFault(f Fault) error { return b.sw.SetFault(f) }

// Fault is the outage in force.
func (b *Base[R]) Fault() Fault { return b.sw.Fault() }

// Requests returns a copy of the request log so far.
func (b *Base[R]) Requests() []R { return b.log.Rows() }

// Queue scripts the next turn requests in order, ahead of markers.
func (b *Base[R]) Queue(r ...Reply) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, r...)
}

// Queued is how many scripted replies no request has taken yet: a test that
// must act while a scripted turn runs waits for its request to take it.
func (b *Base[R]) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// NextQueued takes the next scripted reply, ok=false when none is queued.
func (b *Base[R]) NextQueued() (Reply, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		return Reply{}, false
	}
	r := b.queue[0]
	b.queue = b.queue[1:]
	return r, true
}

// Record appends the row build makes from its sequence number.
func (b *Base[R]) Record(build func(seq int) R) R { return b.log.Append(build) }

// Close stops serving (cutting open streams) and closes the log file.
func (b *Base[R]) Close() error {
	err := b.sw.Close()
	b.log.Close()
	return err
}

// SlowMarker is the prompt text that makes a stand-in stream its answer over
// d (the [standin:slow=…] marker of ParseMarkers).
func SlowMarker(d time.Duration) string { return "[standin:slow=" + d.String() + "]" }

// Asks reports whether text, lower-cased, contains any of phrases: how each
// stand-in recognises its harness's summarisation request by the words the
// harness's compaction prompt uses.
func Asks(text string, phrases ...string) bool {
	t := strings.ToLower(text)
	for _, p := range phrases {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// Kind names a model request the way every stand-in's log does: compact (the
// summarisation request of a compaction), tool_result (a main-loop request
// carrying a tool's result back, within a turn), turn (a main-loop request:
// it offers tools), aux (a side request without tools: titles, topic checks).
func Kind(compaction, tools, toolResult bool) string {
	switch {
	case compaction:
		return "compact"
	case tools && toolResult:
		return "tool_result"
	case tools:
		return "turn"
	}
	return "aux"
}
