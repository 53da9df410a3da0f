package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
)

// Key documents one seat.toml key. `pantty seat init` writes its template
// from Config's own fields (walked by reflection, so a new field appears in it
// by itself) with the comment, default and allowed values found here;
// TestKeysCoverConfig fails while a toml-tagged field of Config or of a
// table in it has no row here, or a row names no field. So the template cannot
// drift from the definition.
type Key struct {
	Key     string // dotted path: "turn_ceiling", "compaction.timeout", "ladder.name" (for [[ladder]])
	Default string // the value that applies when the key is absent, as TOML; "" when none
	Allowed string // the values it takes, when it is a choice
	Comment string // what it does, and why one would set it
}

// dur writes a default duration as seat.toml takes it ("30m", not "30m0s").
func dur(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"0s", "0m"} {
		if strings.HasSuffix(s, z) && len(s) > len(z) && strings.LastIndexAny(s[:len(s)-len(z)], "hm") == len(s)-len(z)-1 {
			s = s[:len(s)-len(z)]
		}
	}
	return fmt.Sprintf("%q", s)
}

// allowedHarnesses stands for the registered harness names in Keys:
// adapters register after this package's variables are initialised, so the
// template fills them in when it is written.
const allowedHarnesses = "(the registered harnesses)"

// Keys is seat.toml's documentation, one row per key (docs/state.md
// repeats it for readers of the repository).
var Keys = []Key{
	{Key: "name", Comment: "The seat's name; must match its directory under seats/."},
	{Key: "harness", Allowed: allowedHarnesses, Comment: "Which harness the seat drives (docs/real-seats.md: running a real Claude Code, Codex CLI or Gemini CLI seat)."},
	{Key: "workdir", Comment: "Absolute path of an existing directory; the harness runs there. It may not hold or sit inside $PANTTY_HOME or the drop root beside it (the model may write its workdir)."},
	{Key: "shape", Default: `"resident"`, Allowed: "resident | turn | step",
		Comment: "resident: one live session compacted at boundaries pantty chooses; turn: one harness process per message (sim only); step: a fresh session per message, started from the handoff (docs/shapes.md)."},
	{Key: "transport", Default: `"tmux"`, Allowed: "tmux | app-server | auto",
		Comment: "tmux: the driver pastes into the harness's TUI in a tmux pane; app-server (codex only, resident only, experimental): the driver runs Codex's own app server and submits each message as a turn (docs/codex.md); auto (any harness): at each start the app server when the installed version's app-server contract measured here (pantty measure contract) has every row met, else tmux; status says which (docs/gates.md)."},
	{Key: "command", Comment: "The harness binary; empty = the adapter's default (claude, codex, gemini, or pantty's simulator) looked up on the harness's PATH. An absolute path survives cron's bare PATH."},
	{Key: "args", Default: "[]", Comment: "Extra arguments for the harness; the flags pantty sets itself (session, settings, resume) are refused."},
	{Key: "model", Comment: "Passed to the harness (--model); status reports the model the harness records, never this."},
	{Key: "permission_mode", Comment: "Claude Code: --permission-mode (default, acceptEdits, auto, bypassPermissions, …); Codex: --sandbox (read-only, workspace-write, danger-full-access); Gemini CLI: --approval-mode (default, auto_edit, yolo, plan). Unattended seats: docs/real-seats.md."},
	{Key: "env", Default: "{}", Comment: "Variables added to the harness's environment, as an inline table: env = { KEY = \"value\" }. TMUX*, CLAUDECODE*, PANTTY_SEAT*, PANTTY_HOME are refused. Secrets belong in pass_env, not here."},
	{Key: "pass_env", Default: "[]", Comment: "Names of caller variables passed to the harness on top of the allow-list (PATH, HOME, LANG, …), e.g. [\"ANTHROPIC_API_KEY\"]: the value stays out of this file. `seat start` records them (and your PATH) in launch-env.toml, so a revival by cron gets them too; `seat start --refresh-env` takes new values."},
	{Key: "env_file", Default: `""`, Comment: "Absolute path of a KEY=VALUE file (systemd EnvironmentFile syntax) read at every launch, after the recorded variables and before the adapter's and env: a credential you rotate without touching anything else. Must be yours alone (not group/other-writable, not in the workdir); no LD_*/NODE_OPTIONS."},
	{Key: "max_message_bytes", Default: fmt.Sprint(guard.DefaultMaxMessageBytes), Comment: "Board messages larger than this are refused by 'seat send' (at most the default)."},
	{Key: "turn_ceiling", Default: dur(DefaultTurnCeiling), Comment: "A turn running longer is cancelled and its message failed (ceiling)."},
	{Key: "heartbeat_interval", Default: dur(DefaultHeartbeatInterval), Comment: "The driver's loop writes heartbeat.toml at this interval; recover judges staleness by it."},
	{Key: "ready_timeout", Default: dur(DefaultReadyTimeout), Comment: "How long start waits for the harness to be ready (SessionStart, or its input box)."},
	{Key: "paste_settle", Default: `"0s"`, Comment: "Quiet time between paste and Enter; 0s = the adapter's measured default (150ms for claude-code and codex, 600ms for gemini-cli, 50ms for sim)."},
	{Key: "submit_timeout", Default: dur(DefaultSubmitTimeout), Comment: "Wait for submission evidence (UserPromptSubmit) before retrying Enter."},
	{Key: "submit_retries", Default: fmt.Sprint(DefaultSubmitRetries), Allowed: "0..20", Comment: "Enter retries before a message fails as undelivered."},
	{Key: "relay", Default: `""`, Allowed: `"" | "ignore"`, Comment: "\"\": a person attaching puts the seat in relay (the driver submits nothing meanwhile); \"ignore\": people attach only to watch."},
	{Key: "activity", Default: "false", Comment: "Record the current tool call (PreToolUse/PostToolUse hooks: a process spawn per tool call); takes effect at the next launch."},
	{Key: "authority.isolation", Default: `"auto"`, Allowed: "auto | on | off", Comment: "OS isolation of the model's shell (Claude Code's bubblewrap sandbox, Codex's permission profile, pantty's own bubblewrap jail for Gemini CLI): auto means on when a launch-time probe shows it runs here; on, a launch without it fails; off, only the read denies (docs/intake.md). The verdict is in authority.toml and status."},
	{Key: "gates.unmeasured", Default: `"refuse"`, Allowed: "refuse | warn", Comment: "A resident start or revival on a harness version nobody measured (no registry range covers it, no local 'pantty measure contract'): refuse, or warn and run (docs/gates.md)."},
	{Key: "provider", Comment: "The quota pool the harness draws on: a provider refusal (rate limit, usage limit) blocks every seat naming it. Empty = the harness name."},
	{Key: "tmux.socket", Default: `""`, Comment: "The private tmux server: a name (like tmux -L) or an absolute path; empty = $PANTTY_TMUX_SOCKET, else \"pantty\"."},
	{Key: "compaction.instructions", Default: `""`, Comment: "Passed to /compact by the compaction cycle (not to Codex, whose /compact takes no arguments: left out and logged)."},
	{Key: "compaction.timeout", Default: dur(DefaultCompactTimeout), Comment: "A compaction cycle whose evidence (PreCompact, SessionStart compact, PostCompact) has not all come by then failed."},
	{Key: "refresh.policy", Default: `"none"`, Allowed: "none | fixed | context | self",
		Comment: "When the driver runs the compaction cycle itself: never (only 'seat compact'), every N messages, on context pressure, or when the seat asks ('pantty handoff request')."},
	{Key: "refresh.every", Default: "0", Comment: "fixed: processed messages between refreshes (at least 1)."},
	{Key: "refresh.threshold", Default: "0.0", Comment: "context: fraction (0..1) of window minus floor that reclaimable plus the next message's estimate may reach."},
	{Key: "ladder.name", Default: `"top"`, Comment: "The means-failure ladder: one [[ladder]] table per rung, top first (docs/recover.md). The rung's name, [a-z0-9][a-z0-9._-]*."},
	{Key: "ladder.harness", Default: `""`, Comment: "The rung's harness: empty or the seat's own (another harness is not supported yet)."},
	{Key: "ladder.command", Default: `""`, Comment: "The rung's harness binary (with a ladder, command, args and model belong in the rungs)."},
	{Key: "ladder.args", Default: "[]", Comment: "The rung's extra arguments."},
	{Key: "ladder.model", Default: `""`, Comment: "The rung's model."},
	{Key: "ladder.provider", Default: `""`, Comment: "The rung's provider; empty = the top-level provider."},
	{Key: "ladder.env", Default: "{}", Comment: "Added to the top-level env for this rung, as an inline table."},
	{Key: "recovery.demote_after", Default: fmt.Sprint(DefaultDemoteAfter), Comment: "Unverified recoveries on one rung before recover descends a rung."},
	{Key: "recovery.climb_after", Default: fmt.Sprint(DefaultClimbAfter), Comment: "Good turns below the top before the floor climbs back one rung."},
	{Key: "recovery.backoff", Default: dur(DefaultBackoff), Comment: "Wait after the first unverified recovery; doubles each time."},
	{Key: "recovery.backoff_max", Default: dur(DefaultBackoffMax), Comment: "Cap on that wait."},
	{Key: "recovery.transient_attempts", Default: fmt.Sprint(DefaultTransientAttempts), Comment: "Provider errors (5xx, overloaded) one message may meet before it fails transient-exhausted instead of going back to the queue ('seat retry' queues it again)."},
	{Key: "recovery.provider_reprobe", Default: dur(DefaultProviderWait), Comment: "Provider wait when a refusal's reset time cannot be read."},
	{Key: "recovery.provider_max_wait", Default: dur(MaxProviderWait), Comment: "Cap on a parsed reset time."},
	{Key: "done.checks", Default: fmt.Sprintf("[%q, %q]", CheckGitClean, CheckGitPushed), Allowed: CheckGitClean + ", " + CheckGitPushed,
		Comment: "What the finalizer verifies in the workdir before it tears a finished seat down; [] for nothing."},
}

// configField is one toml-tagged field found by walking Config.
type configField struct {
	key   string // dotted path
	table string // "" for a top-level key, else the table's name
	array bool   // the table is an array of tables ([[ladder]])
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

// configFields walks t's toml-tagged fields in declaration order: scalars,
// lists and maps are keys; a struct (other than one decoded from text, such as
// Duration) is a table and a slice of structs an array of tables.
func configFields(t reflect.Type, prefix, table string, array bool) []configField {
	var out []configField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(textUnmarshaler):
			out = append(out, configFields(ft, prefix+tag+".", tag, false)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configFields(ft.Elem(), prefix+tag+".", tag, true)...)
		default:
			out = append(out, configField{key: prefix + tag, table: table, array: array})
		}
	}
	return out
}

// closingTable is the one table the template writes as a live header, last:
// a key appended at the end of the file lands in it and is refused as unknown,
// instead of becoming something else (seat.toml used to end in [env], where an
// appended key silently became an environment variable). [tmux] has one
// optional key, so its header costs nothing.
const closingTable = "tmux"

// Template is the commented seat.toml `pantty seat init` writes. Every key
// of Config is listed, in declaration order, with its comment, allowed values
// and default; set holds top-level keys written as values (TOML text), the
// others are commented out showing the value that applies when absent. env is
// an inline table (a top-level key); every table but closingTable is written
// commented out, header included, and closingTable comes last.
func Template(name string, set map[string]string, harnesses []string) string {
	docs := map[string]Key{}
	for _, k := range Keys {
		if k.Allowed == allowedHarnesses {
			k.Allowed = strings.Join(harnesses, " | ")
		}
		docs[k.Key] = k
	}
	fields := configFields(reflect.TypeOf(Config{}), "", "", false)
	var b strings.Builder
	fmt.Fprintf(&b, `# seat.toml — declared identity and configuration of seat %q.
# Written by 'pantty seat init'; edit it by hand. pantty validates it on every
# start and never rewrites it. Unknown keys are errors (with their line).
# Every key is listed; a commented-out key shows the value that applies when it
# is absent. To use a table, uncomment its header with its keys. Running a real
# Claude Code or Codex seat: docs/real-seats.md.
`, name)
	var tables []string
	seen := map[string]bool{}
	for _, f := range fields {
		if f.table != "" && !seen[f.table] && f.table != closingTable {
			seen[f.table] = true
			tables = append(tables, f.table)
		}
	}
	tables = append(tables, closingTable)
	writeKeys := func(table string, live bool) {
		for _, f := range fields {
			if f.table != table {
				continue
			}
			short := f.key[strings.LastIndex(f.key, ".")+1:]
			d, ok := docs[f.key]
			if !ok {
				d.Comment = "(not documented yet: add a row to Keys in internal/config/keys.go)"
			}
			comment := d.Comment
			if d.Allowed != "" {
				comment += " One of: " + d.Allowed + "."
			}
			b.WriteString("\n")
			for _, l := range wrap(comment, 78) {
				b.WriteString("# " + l + "\n")
			}
			if v, ok := set[f.key]; ok && live {
				fmt.Fprintf(&b, "%s = %s\n", short, v)
				continue
			}
			def := d.Default
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(&b, "# %s = %s\n", short, def)
		}
	}
	writeKeys("", true)
	for _, t := range tables {
		array := false
		for _, f := range fields {
			array = array || f.table == t && f.array
		}
		header := "[" + t + "]"
		if array {
			header = "[[" + t + "]]"
		}
		if t == closingTable {
			b.WriteString("\n# This table comes last on purpose: a key added below it belongs to it and is\n# refused as unknown. Put top-level keys above the tables.\n")
			fmt.Fprintf(&b, "%s\n", header)
		} else {
			fmt.Fprintf(&b, "\n# %s\n", header)
		}
		writeKeys(t, false)
	}
	return b.String()
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// inlineTable writes a map as a TOML inline table with sorted keys.
func InlineTable(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s = %q", k, m[k])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// FieldKeys lists every key seat.toml takes, as dotted paths ("turn_ceiling",
// "compaction.timeout", "ladder.name"): the walk of Config the template is
// written from, for checks that hold a document against the definition.
func FieldKeys() []string {
	var out []string
	for _, f := range configFields(reflect.TypeOf(Config{}), "", "", false) {
		out = append(out, f.key)
	}
	return out
}
