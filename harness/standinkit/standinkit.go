// Package standinkit holds what pantty's loopback API stand-ins share, whatever
// API they imitate: a loopback-only listener, the request log (memory and a
// JSONL file), the [standin:…] marker language that scripts a reply from inside
// the prompt, the four-bytes-a-token count, a prompt-cache-like memory of what
// was sent before, and the pacing of a streamed reply. Each stand-in
// (harness/claudecode/standin, harness/codex/standin) keeps its own wire format.
package standinkit

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Listen opens a TCP listener on a loopback address only (default
// 127.0.0.1:0, a free port): a stand-in is never reachable from elsewhere.
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("standin: listen address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("standin: listen address %q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("standin: listen: %w", err)
	}
	return ln, nil
}

// Log is a stand-in's request log: every row in memory, and one JSON line per
// row in a file when it has a path.
type Log[R any] struct {
	mu   sync.Mutex
	rows []R
	f    *os.File
}

// OpenLog starts a log; path "" keeps it in memory only.
func OpenLog[R any](path string) (*Log[R], error) {
	l := &Log[R]{}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("standin: request log: %w", err)
		}
		l.f = f
	}
	return l, nil
}

// Append adds the row build makes from its sequence number (1, 2, …).
func (l *Log[R]) Append(build func(seq int) R) R {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := build(len(l.rows) + 1)
	l.rows = append(l.rows, r)
	if l.f != nil {
		if b, err := json.Marshal(r); err == nil {
			l.f.Write(append(b, '\n'))
		}
	}
	return r
}

// Rows returns a copy of the log so far.
func (l *Log[R]) Rows() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]R(nil), l.rows...)
}

// Close closes the log file; the rows stay readable.
func (l *Log[R]) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// Reply is a scripted answer for one request.
type Reply struct {
	Status int           // 0 means 200
	Text   string        // "" means the stand-in's default reply (a quote of the prompt)
	Delay  time.Duration // before the response headers
	Slow   time.Duration // spread of the streamed body
	Reset  time.Duration // 429: when the limit resets (retry-after); default 30s
	Fail   bool          // a 200 stream that ends in the API's own failure event
	// Bash, when set, answers with a Bash tool call running this command
	// instead of text (stand-ins that offer tools; Claude's).
	Bash string
	// Read, when set, answers with a Read tool call of this path (Claude's
	// file read tool), to measure what the harness lets the model read.
	Read string
	// Tokens, when set, is the input token count the usage reports instead of
	// the request's own size: a thread at its window's edge, without sending
	// a window's worth of text.
	Tokens int
	// Escalate, with Bash, asks the harness to run the command outside its
	// sandbox (Codex's exec_command sandbox_permissions "require_escalated"),
	// which under an approval policy that asks makes the harness ask first.
	Escalate bool
}

// ParseMarkers reads the [standin:…] markers of a prompt into a Reply, and
// returns the markers it understood ("" when none):
//
//	[standin:slow=5s]          stream the reply over 5s (the client may cancel)
//	[standin:delay=5s]         wait 5s before answering at all
//	[standin:429 reset=30s]    429 with retry-after and reset headers
//	[standin:529]              529 overloaded
//	[standin:error=500]        that status with an API error body
//	[standin:fail]             a 200 stream that ends in a failure event
//	[standin:reply=TEXT]       answer TEXT (to the end of the line) instead of the quote
//	[standin:bash=COMMAND]     answer with a Bash tool call (to the end of the line)
//	[standin:read=PATH]        answer with a Read tool call of PATH (to the end of the line)
//	[standin:tokens=N]         report N input tokens in this answer's usage
//	[standin:escalate]         the bash call asks to run outside the sandbox (Codex)
func ParseMarkers(text string) (Reply, string) {
	var rep Reply
	var got []string
	rest := text
	for {
		i := strings.Index(rest, "[standin:")
		if i < 0 {
			break
		}
		rest = rest[i+len("[standin:"):]
		if k, ok := lineMarker(rest); ok {
			// The value runs to the end of the line, brackets and all.
			line, _, _ := strings.Cut(rest, "\n")
			v := strings.TrimSuffix(strings.TrimPrefix(line, k+"="), "]")
			switch k {
			case "reply":
				rep.Text = v
			case "read":
				rep.Read = v
			default:
				rep.Bash = v
			}
			got = append(got, k)
			continue
		}
		j := strings.IndexAny(rest, "]\n")
		if j < 0 {
			break
		}
		for _, f := range strings.Fields(rest[:j]) {
			k, v, _ := strings.Cut(f, "=")
			d, derr := time.ParseDuration(v)
			switch {
			case k == "slow" && derr == nil:
				rep.Slow = d
			case k == "delay" && derr == nil:
				rep.Delay = d
			case k == "reset" && derr == nil:
				rep.Reset = d
			case k == "429":
				rep.Status = http.StatusTooManyRequests
			case k == "529":
				rep.Status = 529
			case k == "fail":
				rep.Fail = true
			case k == "escalate":
				rep.Escalate = true
			case k == "tokens":
				if _, err := fmt.Sscanf(v, "%d", &rep.Tokens); err != nil || rep.Tokens <= 0 {
					rep.Tokens = 0
					continue
				}
			case k == "error":
				var code int
				if _, err := fmt.Sscanf(v, "%d", &code); err == nil && code >= 400 && code <= 599 {
					rep.Status = code
				}
			default:
				continue
			}
			got = append(got, f)
		}
	}
	return rep, strings.Join(got, " ")
}

// lineMarker names the marker at the start of rest when its value runs to the
// end of the line.
func lineMarker(rest string) (string, bool) {
	for _, k := range []string{"reply", "bash", "read"} {
		if strings.HasPrefix(rest, k+"=") {
			return k, true
		}
	}
	return "", false
}

// Tokens is the stand-ins' tokenizer: four bytes a token, rounded up. Usage
// computed from it grows with what was really sent, so fixed numbers cannot
// make a context reading pass a test by accident.
func Tokens(n int) int { return (n + 3) / 4 }

// Cache remembers what a stand-in answered before, like an API's prompt
// cache: a part seen again is a cache read.
type Cache struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// Seen reports whether key was seen before, and remembers it.
func (c *Cache) Seen(key []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[32]byte]bool{}
	}
	h := sha256.Sum256(key)
	old := c.seen[h]
	c.seen[h] = true
	return old
}

// FirstLine is the first non-empty line of a prompt that does not start with
// one of skip, cut to 200 bytes: what a default reply quotes, so a guard header
// (with its message id and nonce) reaches the answer and the transcript.
func FirstLine(s string, skip ...string) string {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		drop := strings.TrimSpace(l) == ""
		for _, p := range skip {
			drop = drop || strings.HasPrefix(l, p)
		}
		if drop {
			continue
		}
		if len(l) > 200 {
			l = l[:200]
		}
		return l
	}
	return ""
}

// Split cuts text into about n pieces on rune boundaries (the deltas of a
// streamed reply).
func Split(text string, n int) []string {
	rs := []rune(text)
	if len(rs) == 0 {
		return []string{""}
	}
	size := (len(rs) + n - 1) / n
	var out []string
	for i := 0; i < len(rs); i += size {
		out = append(out, string(rs[i:min(i+size, len(rs))]))
	}
	return out
}

// Pause waits d, or until done closes (the client went away); it reports
// whether the full pause passed.
func Pause(d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// SSE writes server-sent events and flushes each at once.
type SSE struct {
	W http.ResponseWriter
}

// Send writes one event whose data is v as JSON; an error means the client is gone.
func (s SSE) Send(event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.W, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	if fl, ok := s.W.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

// RetryAfter is the retry-after header value for a reset in d (whole seconds,
// rounded up; default 30s).
func RetryAfter(d time.Duration) (time.Duration, string) {
	if d <= 0 {
		d = 30 * time.Second
	}
	return d, fmt.Sprint(int((d + time.Second - 1) / time.Second))
}

// Fault is an outage a test switches on and off at run time (Server.SetFault
// of each stand-in): while it holds, every model request fails the way the
// real provider fails — the same status, headers and error body — so a test
// measures what the real harness reports for it, and clears it to see the
// queue drain. Each stand-in writes the provider's own wire format for it.
type Fault string

// The faults a stand-in can imitate.
const (
	FaultNone        Fault = ""
	FaultAuth        Fault = "auth"        // 401: the key is refused
	FaultBilling     Fault = "billing"     // Anthropic 400 credit balance; OpenAI 429 insufficient_quota
	FaultRateLimit   Fault = "rate-limit"  // 429 with a reset
	FaultServer      Fault = "server"      // 500
	FaultUnavailable Fault = "unavailable" // 503
	FaultOverloaded  Fault = "overloaded"  // 529 (Anthropic's overloaded_error)
	FaultRefused     Fault = "refused"     // the listener is closed: connection refused
)

// Status is the HTTP status the fault answers with (0 for none and refused).
func (f Fault) Status() int {
	switch f {
	case FaultAuth:
		return http.StatusUnauthorized
	case FaultRateLimit:
		return http.StatusTooManyRequests
	case FaultServer:
		return http.StatusInternalServerError
	case FaultUnavailable:
		return http.StatusServiceUnavailable
	case FaultOverloaded:
		return 529
	}
	return 0
}

// Switch serves an http.Handler on a loopback address that can be taken away
// and given back at the same address: Refuse closes the listener and every
// open connection (the client's next connect is refused, ECONNREFUSED, as
// when a gateway is down); Serve listens again on the same port. It also holds
// the stand-in's current Fault.
type Switch struct {
	mu      sync.Mutex
	fault   Fault
	addr    string
	handler http.Handler
	ln      net.Listener
	srv     *http.Server
}

// NewSwitch listens on addr (loopback only, see Listen) and serves h.
func NewSwitch(addr string, h http.Handler) (*Switch, error) {
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	s := &Switch{addr: ln.Addr().String(), handler: h}
	s.serveOn(ln)
	return s, nil
}

func (s *Switch) serveOn(ln net.Listener) {
	s.ln = ln
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
}

// Addr is the host:port served (the same across Refuse and Serve).
func (s *Switch) Addr() string { return s.addr }

// Refuse stops accepting connections and cuts the open ones.
func (s *Switch) Refuse() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	s.srv, s.ln = nil, nil
	return err
}

// Serve listens again on the same address after Refuse.
func (s *Switch) Serve() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := Listen(s.addr)
	if err != nil {
		return err
	}
	s.serveOn(ln)
	return nil
}

// SetFault switches an outage on (FaultNone clears it): the stand-in answers
// every model request with the fault from now on (Fault), and FaultRefused
// closes the listener instead; clearing it listens again on the same port.
func (s *Switch) SetFault(f Fault) error {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
	if f == FaultRefused {
		return s.Refuse()
	}
	return s.Serve()
}

// Fault is the outage in force (FaultNone when there is none).
func (s *Switch) Fault() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fault
}

// Close stops serving for good.
func (s *Switch) Close() error { return s.Refuse() }
