package sim

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// engine is the session and the simulated model, shared by the TUI and -p.
// It is not safe for concurrent use: the TUI drives it from its event loop.
type engine struct {
	cfg       *simConfig
	sessionID string
	st        tokenState
	lastUUID  string
	pending   string   // hook output waiting for the next model request
	history   []string // conversation lines restored by --resume
	say       func(string)
}

// newEngine checks the session flags the way Claude does before anything
// is shown: --session-id must be unused, --resume must exist.
func newEngine(cfg *simConfig) (*engine, error) {
	e := &engine{cfg: cfg, sessionID: cfg.sessionID, say: func(string) {}}
	if cfg.resume {
		if err := e.loadTranscript(); err != nil {
			return nil, err
		}
		return e, nil
	}
	if _, err := os.Stat(e.transcriptPath()); err == nil {
		//lint:ignore ST1005 the simulator prints Claude Code's own message, word for word
		return nil, fmt.Errorf("Session ID %s is already in use.", e.sessionID)
	}
	return e, nil
}

func (e *engine) startSource() string {
	if e.cfg.resume {
		return "resume"
	}
	return "startup"
}

// turn is one model request in flight.
type turn struct {
	promptID string
	prompt   string
	injected string
	mentions []mention
	req      usage // what the request carried; OutputTokens is 0
	newTok   int   // tokens this request added to the conversation
	reply    string
	markers
}

// duration is how long the simulated model takes for t.
func (t *turn) duration(def time.Duration) time.Duration {
	if t.hasSlow {
		return t.slow
	}
	return def
}

func (e *engine) isDispatch(text string) bool {
	return text != "" && strings.ContainsRune(e.cfg.sigils, []rune(text)[0])
}

// beginTurn sends a prompt to the simulated model: it consumes injected
// context, expands mentions, records the user row and the request log row.
// extra is context added by UserPromptSubmit hooks.
func (e *engine) beginTurn(prompt, promptID, extra string) *turn {
	t := &turn{promptID: promptID, prompt: prompt, markers: parseMarkers(prompt)}
	t.injected = e.pending + extra
	e.pending = ""
	if e.cfg.mentions {
		t.mentions = findMentions(prompt, e.cfg.cwd)
	}
	var names []string
	content := map[string]string{}
	t.newTok = tokens(prompt) + tokens(t.injected)
	for _, m := range t.mentions {
		names = append(names, m.path)
		content[m.path] = m.content
		t.newTok += tokens(m.content)
	}
	t.req = usage{InputTokens: t.newTok, CacheCreationInputTokens: e.st.Reclaimable, CacheReadInputTokens: e.cfg.floor}
	errCode := ""
	if t.failure != nil {
		errCode = t.failure.code
	} else {
		t.reply = replyFor(prompt)
	}
	e.appendRow(row{Type: "user", PromptID: promptID, Message: &message{Role: "user", Content: prompt}})
	e.logRequest(requestRow{PromptID: promptID, Kind: "turn", NewInput: prompt, Injected: t.injected,
		Mentions: names, MentionContent: content, HistoryTurns: e.st.Turns, Usage: t.req, Error: errCode})
	return t
}

// completeTurn lands the reply: tokens grow by what was sent plus the
// reply, the assistant row is written, then the Stop hook fires.
func (e *engine) completeTurn(t *turn) {
	for _, c := range t.tools {
		e.runHooks("PreToolUse", c.name, map[string]any{"tool_name": c.name, "tool_input": c.input()})
		e.runHooks("PostToolUse", c.name, map[string]any{"tool_name": c.name, "tool_input": c.input(),
			"tool_response": map[string]any{"simulated": true}})
	}
	u := t.req
	u.OutputTokens = tokens(t.reply)
	e.st.Reclaimable += t.newTok + u.OutputTokens
	e.st.Turns++
	e.st.SinceCompact++
	e.st.TotalInput += u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	e.st.TotalOutput += u.OutputTokens
	e.st.CostUSD += u.cost()
	e.st.Last = u
	e.appendRow(row{Type: "assistant", PromptID: t.promptID, Message: &message{Role: "assistant",
		Model: e.cfg.model, Content: []textBlock{{"text", t.reply}}, Usage: &u}})
	for _, l := range replyLines(t.reply) {
		e.say(l)
	}
	e.runHooks("Stop", "", map[string]any{"prompt_id": t.promptID, "stop_hook_active": false,
		"last_assistant_message": t.reply})
}

// failTurn is a provider refusal: nothing is added to the context (the
// user must resend), injected context is kept for the next request, and
// StopFailure fires instead of Stop.
func (e *engine) failTurn(t *turn) {
	e.pending = t.injected + e.pending
	e.appendRow(row{Type: "assistant", PromptID: t.promptID, IsAPIErrorMessage: true,
		Message: &message{Role: "assistant", Model: "<synthetic>", Content: []textBlock{{"text", t.failure.message}},
			Usage: &usage{}}})
	e.say("  ⎿  " + t.failure.message)
	e.runHooks("StopFailure", t.failure.code, map[string]any{"prompt_id": t.promptID, "error": t.failure.code,
		"last_assistant_message": t.failure.message})
}

// interruptTurn is Escape during a turn: the prompt stays in the context,
// an interruption row is written, and no hook fires (as in Claude).
func (e *engine) interruptTurn(t *turn) {
	e.st.Reclaimable += t.newTok + tokens(interrupts)
	e.st.TotalInput += t.req.InputTokens + t.req.CacheCreationInputTokens + t.req.CacheReadInputTokens
	e.appendRow(row{Type: "user", PromptID: t.promptID, Message: &message{Role: "user", Content: interrupts}})
	e.say("  ⎿  Interrupted · What should Claude do instead?")
}

// dispatchResult is what a leading-sigil input did instead of a turn.
type dispatchResult struct {
	lines   []string
	compact *compactReq // approved compaction; the caller waits, then finishCompact
	cleared bool        // /clear: the conversation view must be emptied
	exit    bool        // /exit
}

// compactReq is a compaction that passed its PreCompact hooks.
type compactReq struct {
	instructions string
	preTokens    int
}

// dispatch handles input whose first character is a sigil: slash commands
// and shell commands run locally, and nothing reaches the model as a turn.
// That is the hazard pantty must avoid when delivering messages.
func (e *engine) dispatch(text string) dispatchResult {
	switch text[0] {
	case '/':
		name, args := text[1:], ""
		if i := strings.IndexAny(name, " \t\n"); i >= 0 {
			name, args = name[:i], strings.TrimSpace(name[i+1:])
		}
		switch name {
		case "compact":
			return e.startCompact(text, args)
		case "clear":
			e.logRequest(requestRow{PromptID: newUUID(), Kind: "command", NewInput: text, HistoryTurns: e.st.Turns})
			e.clear()
			return dispatchResult{cleared: true}
		case "context":
			e.logRequest(requestRow{PromptID: newUUID(), Kind: "command", NewInput: text, HistoryTurns: e.st.Turns})
			lines := e.contextLines()
			e.recordCommand(name, args, strings.Join(lines, "\n"))
			return dispatchResult{lines: lines}
		case "exit", "quit":
			e.logRequest(requestRow{PromptID: newUUID(), Kind: "command", NewInput: text, HistoryTurns: e.st.Turns})
			return dispatchResult{exit: true}
		}
		e.logRequest(requestRow{PromptID: newUUID(), Kind: "command", NewInput: text, HistoryTurns: e.st.Turns})
		return dispatchResult{lines: []string{"Unknown command: /" + name}}
	case '!':
		return e.shell(text)
	}
	e.logRequest(requestRow{PromptID: newUUID(), Kind: "command", NewInput: text, HistoryTurns: e.st.Turns})
	return dispatchResult{lines: []string{fmt.Sprintf("Dispatched %q input locally (not sent to the model)", string([]rune(text)[0]))}}
}

// shellTimeout bounds a `!` command like Claude's bash mode.
const shellTimeout = 2 * time.Minute

// shell is Claude's bash mode: the rest of the line runs with sh -c in the
// cwd, for real, and its output joins the conversation context.
func (e *engine) shell(text string) dispatchResult {
	cmd := text[1:]
	out, errOut, code := runShell(cmd, e.cfg.cwd, nil, shellTimeout)
	combined := out + errOut
	e.appendRow(row{Type: "user", Message: &message{Role: "user", Content: "<bash-input>" + cmd + "</bash-input>"}})
	e.st.Reclaimable += tokens(cmd) + tokens(combined)
	e.appendRow(row{Type: "user", Message: &message{Role: "user",
		Content: "<bash-stdout>" + out + "</bash-stdout><bash-stderr>" + errOut + "</bash-stderr>"}})
	e.logRequest(requestRow{PromptID: newUUID(), Kind: "shell", NewInput: text, HistoryTurns: e.st.Turns,
		Output: combined, ExitCode: &code})
	lines := []string{"! " + cmd}
	for _, l := range strings.Split(strings.TrimRight(combined, "\n"), "\n") {
		if l != "" {
			lines = append(lines, "  ⎿  "+l)
		}
	}
	if code != 0 {
		lines = append(lines, fmt.Sprintf("  ⎿  (exit %d)", code))
	}
	return dispatchResult{lines: lines}
}

// notEnough is Claude Code 2.1.328's answer to /compact right after a
// compaction (measured 2026-12-03): PreCompact fires, then this, and no
// PostCompact.
const notEnough = "Not enough messages to compact."

// recordCommand writes a local command and its output to the transcript in
// Claude Code's form: a row naming the command, then a "local_command" row
// with "<local-command-stdout>", which is where pantty reads the answer.
func (e *engine) recordCommand(name, args, out string) {
	e.appendRow(row{Type: "system", Subtype: "local_command", Content: "<command-name>/" + name +
		"</command-name>\n<command-message>" + name + "</command-message>\n<command-args>" + args + "</command-args>"})
	e.appendRow(row{Type: "system", Subtype: "local_command", Content: "<local-command-stdout>" + out + "</local-command-stdout>"})
}

// startCompact runs the PreCompact hooks; exit 2 blocks the compaction. With
// no turn since the last compaction there is nothing to compact: after the
// hooks, the simulator answers as Claude Code does, with no PostCompact.
func (e *engine) startCompact(text, instructions string) dispatchResult {
	res := e.runHooks("PreCompact", "manual", map[string]any{"trigger": "manual", "custom_instructions": instructions})
	if res.blocked {
		e.logRequest(requestRow{PromptID: newUUID(), Kind: "compact-blocked", NewInput: text, HistoryTurns: e.st.Turns})
		return dispatchResult{lines: []string{"Compaction blocked by PreCompact hook: " + res.stderr}}
	}
	if e.st.Compacted && e.st.SinceCompact == 0 {
		e.logRequest(requestRow{PromptID: newUUID(), Kind: "compact-refused", NewInput: text, HistoryTurns: e.st.Turns})
		e.recordCommand("compact", instructions, notEnough)
		return dispatchResult{lines: []string{"  ⎿  " + notEnough}}
	}
	req := &compactReq{instructions: instructions, preTokens: e.cfg.floor + e.st.Reclaimable}
	e.logRequest(requestRow{PromptID: newUUID(), Kind: "compact", NewInput: text, HistoryTurns: e.st.Turns,
		Usage: usage{InputTokens: tokens(instructions), CacheCreationInputTokens: e.st.Reclaimable, CacheReadInputTokens: e.cfg.floor}})
	return dispatchResult{compact: req}
}

// finishCompact replaces the reclaimable context by a small summary (the
// floor never changes), writes Claude's boundary and summary rows, then
// fires SessionStart (source compact, its stdout is injected into the next
// request) and PostCompact.
func (e *engine) finishCompact(c *compactReq) {
	summary := fmt.Sprintf("Summary: %d earlier turns (%d tokens) were compacted.", e.st.Turns, c.preTokens)
	if c.instructions != "" {
		summary += " Instructions: " + c.instructions
	}
	e.st.Reclaimable = tokens(summary)
	e.st.Compacted, e.st.SinceCompact = true, 0
	e.st.Last = usage{CacheCreationInputTokens: e.st.Reclaimable, CacheReadInputTokens: e.cfg.floor}
	e.appendRow(row{Type: "system", Subtype: "compact_boundary", Content: "Conversation compacted",
		CompactMetadata: &compactMeta{Trigger: "manual", PreTokens: c.preTokens}})
	e.appendRow(row{Type: "user", IsCompactSummary: true, Message: &message{Role: "user", Content: summary}})
	e.say("✻ Conversation compacted (ctrl+o for history)")
	if !e.cfg.broken["reinject"] {
		e.sessionStartHook("compact")
	}
	e.runHooks("PostCompact", "manual", map[string]any{"trigger": "manual", "compact_summary": summary})
}

// clear is /clear: the old session ends, a new one with a fresh id and an
// empty conversation starts. The floor stays; everything else resets.
func (e *engine) clear() {
	e.sessionEndHook("clear")
	e.sessionID = newUUID()
	e.st = tokenState{}
	e.lastUUID = ""
	e.pending = ""
	e.history = nil
	e.sessionStartHook("clear")
}

// contextLines is /context: the token breakdown pantty's operators read.
func (e *engine) contextLines() []string {
	used := e.cfg.floor + e.st.Reclaimable
	pct := float64(used) * 100 / float64(e.cfg.window)
	free := e.cfg.window - used
	if free < 0 {
		free = 0
	}
	return []string{
		"Context Usage",
		fmt.Sprintf("  %s · %d/%d tokens (%.1f%%)", e.cfg.model, used, e.cfg.window, pct),
		fmt.Sprintf("  System prompt and tools (floor): %d tokens", e.cfg.floor),
		fmt.Sprintf("  Messages: %d tokens", e.st.Reclaimable),
		fmt.Sprintf("  Free space: %d tokens", free),
	}
}
