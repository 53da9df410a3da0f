package outage_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// The reset time of a provider refusal, in each form vendors write it, read
// against an injected clock and zone. Every result is capped; a form that is
// not understood is "not parsed" (the caller re-probes on a fixed interval).
func TestParseReset(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("UTC-5", -5*3600)
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, loc) // 14:00 local
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 10, h, m, 0, 0, loc) }
	cases := []struct {
		name, text string
		want       time.Time
		ok         bool
	}{
		// 1. unix epoch (seconds, milliseconds), as Claude's old usage-limit line had it
		{"epoch seconds", "Claude AI usage limit reached|" + fmt.Sprint(now.Add(90*time.Minute).Unix()), now.Add(90 * time.Minute), true},
		{"epoch milliseconds", fmt.Sprintf("x-ratelimit-reset: %d", now.Add(2*time.Minute).UnixMilli()), now.Add(2 * time.Minute), true},
		{"an old epoch is no reset", "request 1234567890 failed", time.Time{}, false},
		// 2. Retry-After seconds
		{"retry-after header", "429 Too Many Requests; retry-after: 120", now.Add(2 * time.Minute), true},
		{"retry after words", "Please retry after 30 seconds.", now.Add(30 * time.Second), true},
		// 3. ISO timestamp
		{"iso utc", "rate limited; resets at 2026-03-10T20:30:00Z", time.Date(2026, 3, 10, 20, 30, 0, 0, time.UTC), true},
		{"iso offset", "reset 2026-03-10T21:00:00+01:00", time.Date(2026, 3, 10, 20, 0, 0, 0, time.UTC), true},
		{"iso without zone is local", "until 2026-03-10 15:15", at(15, 15), true},
		// 4. relative duration
		{"relative h m", "API Error: Request rejected (429) · resets in 2h 5m", now.Add(2*time.Hour + 5*time.Minute), true},
		{"relative seconds (the simulator)", "API Error: Request rejected (429) · resets in 2s", now.Add(2 * time.Second), true},
		{"relative words", "Try again in 1 hour and 30 minutes", now.Add(90 * time.Minute), true},
		// 5. wall-clock hour
		{"clock pm", "5-hour limit reached ∙ resets 3:45pm", at(15, 45), true},
		{"clock 24h", "usage limit: resets at 16:05", at(16, 5), true},
		{"clock passed is tomorrow, capped", "resets 9am", now.Add(config.MaxProviderWait), true},
		{"clock with zone", "Your limit will reset at 10pm (Europe/Paris)", time.Date(2026, 3, 10, 22, 0, 0, 0, paris), true},
		// capped: never more than MaxProviderWait ahead
		{"relative capped", "resets in 3 days", now.Add(config.MaxProviderWait), true},
		{"iso capped", "resets at 2026-03-14T00:00:00Z", now.Add(config.MaxProviderWait), true},
		{"past is now", "resets at 2026-03-10T12:00:00Z", now, true},
		// not understood
		{"no time at all", "API Error: Overloaded (529)", time.Time{}, false},
		{"bare number", "rate limit at 3", time.Time{}, false},
		{"empty", "", time.Time{}, false},
	}
	// Late in the day, an hour already passed today is tomorrow's.
	late := time.Date(2026, 3, 10, 23, 0, 0, 0, loc)
	if got, ok := outage.ParseReset("resets 1am", late, loc); !ok || !got.Equal(late.Add(2*time.Hour)) {
		t.Fatalf("resets 1am at 23:00: %v %v, want 01:00 tomorrow", got, ok)
	}
	// The minute named is running (Codex 0.171.0 words a reset 8 s ahead "try
	// again at 9:33 PM" at 9:33:48 PM): the reset is inside it, so its end,
	// not the same minute tomorrow (the cap, 6 h, before).
	running := time.Date(2026, 3, 10, 21, 33, 48, 0, loc)
	codex := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:33 PM."
	if got, ok := outage.ParseReset(codex, running, loc); !ok || !got.Equal(time.Date(2026, 3, 10, 21, 34, 0, 0, loc)) {
		t.Fatalf("try again at 9:33 PM at 21:33:48: %v %v, want 21:34:00 today", got, ok)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := outage.ParseReset(c.text, now, loc)
			if ok != c.ok || !got.Equal(c.want) {
				t.Fatalf("ParseReset(%q) = %v, %v; want %v, %v", c.text, got, ok, c.want, c.ok)
			}
		})
	}
}

// An unparseable refusal waits the bounded re-probe interval; a parsed one its
// reset, capped by the seat's own cap.
func TestRefusalBlock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	b := outage.RefusalBlock("a", "overloaded", "API Error: Overloaded (529)", now, 45*time.Second, time.Hour)
	if b.Parsed || !b.Until.Equal(now.Add(45*time.Second)) || b.Seat != "a" || b.Error != "overloaded" {
		t.Fatalf("unparseable refusal: %+v", b)
	}
	b = outage.RefusalBlock("a", "rate_limit", "resets in 5h", now, 45*time.Second, time.Hour)
	if !b.Parsed || !b.Until.Equal(now.Add(time.Hour)) {
		t.Fatalf("capped refusal: %+v", b)
	}
}

// Blocks are per provider and shared: concurrent recorders all land, a later
// refusal never shortens a block, and expired blocks are dropped on write.
func TestRecordBlockShared(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	now := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("p%d", i)
			if err := outage.RecordBlock(home, p, state.Block{Until: now.Add(time.Minute), Seat: p}, now); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	bs, err := outage.ReadBlocks(home)
	if err != nil || len(bs) != 8 {
		t.Fatalf("after 8 concurrent recorders: %d blocks (%v): %v", len(bs), err, bs)
	}
	if err := outage.RecordBlock(home, "p0", state.Block{Until: now.Add(time.Second)}, now); err != nil {
		t.Fatal(err)
	}
	bs, _ = outage.ReadBlocks(home)
	if !bs["p0"].Until.Equal(now.Add(time.Minute).UTC()) && !bs["p0"].Until.Equal(now.Add(time.Minute)) {
		t.Fatalf("an earlier reset shortened the block: %v", bs["p0"].Until)
	}
	later := now.Add(2 * time.Minute)
	if err := outage.RecordBlock(home, "p9", state.Block{Until: later.Add(time.Minute)}, later); err != nil {
		t.Fatal(err)
	}
	bs, _ = outage.ReadBlocks(home)
	if len(bs) != 1 {
		t.Fatalf("expired blocks were kept: %v", bs)
	}
	if err := outage.RecordBlock(home, "Bad Name", state.Block{}, now); err == nil {
		t.Fatal("an invalid provider name was accepted")
	}
	// A corrupt providers.toml is reported, never replaced.
	os.WriteFile(state.ProvidersPath(home), []byte("garbage ="), 0o600)
	if _, err := outage.ReadBlocks(home); err == nil {
		t.Fatal("corrupt providers.toml read without error")
	}
	if err := outage.RecordBlock(home, "p1", state.Block{Until: later.Add(time.Hour)}, later); err == nil {
		t.Fatal("a corrupt providers.toml was overwritten")
	}
}

// ladderConfig loads a seat.toml with the given extra lines.
func ladderConfig(t *testing.T, extra string) config.Config {
	t.Helper()
	home := t.TempDir()
	work := t.TempDir()
	s, err := state.Open(home, "lad")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(s.Dir, 0o700)
	text := fmt.Sprintf("name = \"lad\"\nharness = \"sim\"\nworkdir = %q\n%s\n", work, extra)
	if err := os.WriteFile(filepath.Join(s.Dir, "seat.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The running rung is derived from the floor and the block map: the first rung
// at or below the floor whose provider is free; when none is, the earliest
// unblock (never the latest) on the rung it belongs to.
func TestPlanFor(t *testing.T) {
	t.Parallel()
	c := ladderConfig(t, `
[[ladder]]
name = "a"
model = "pinned"
provider = "pa"

[[ladder]]
name = "b"
provider = "pa"

[[ladder]]
name = "c"
command = "/bin/other"
provider = "pc"
`)
	now := time.Now()
	block := func(kv ...any) state.Blocks {
		b := state.Blocks{}
		for i := 0; i < len(kv); i += 2 {
			b[kv[i].(string)] = state.Block{Until: now.Add(kv[i+1].(time.Duration)), Error: "rate_limit"}
		}
		return b
	}
	cases := []struct {
		name   string
		floor  string
		blocks state.Blocks
		rung   string
		wait   time.Duration
	}{
		{"top", "", nil, "a", 0},
		{"floor", "b", nil, "b", 0},
		{"blocked top runs on another provider", "", block("pa", time.Hour), "c", 0},
		{"expired block", "", block("pa", -time.Second), "a", 0},
		{"all blocked waits for the earliest", "", block("pa", time.Hour, "pc", time.Minute), "c", time.Minute},
		{"earliest is the top", "", block("pa", time.Minute, "pc", time.Hour), "a", time.Minute},
		{"floor below the block", "c", block("pa", time.Hour), "c", 0},
		{"unknown floor is the top", "gone", nil, "a", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := outage.PlanFor(c, tc.floor, tc.blocks, now)
			var wait time.Duration
			if !p.Wait.IsZero() {
				wait = p.Wait.Sub(now)
			}
			if p.Rung != tc.rung || wait != tc.wait {
				t.Fatalf("plan = rung %q wait %s (%s); want rung %q wait %s", p.Rung, wait, p.Why, tc.rung, tc.wait)
			}
			if p.Config.Env[config.RungEnv] != tc.rung || p.Provider != p.Config.Provider {
				t.Fatalf("the rung's config is not applied: env %v provider %q", p.Config.Env, p.Config.Provider)
			}
		})
	}
	if p := outage.PlanFor(c, "", nil, now); p.Config.Model != "pinned" || p.Config.Command != "" {
		t.Fatalf("rung a: model %q command %q", p.Config.Model, p.Config.Command)
	}
	if p := outage.PlanFor(c, "b", nil, now); p.Config.Model != "" {
		t.Fatalf("rung b drops the model pin, got %q", p.Config.Model)
	}
	// Without a ladder there is one unnamed rung on the harness's provider.
	plain := ladderConfig(t, "")
	if p := outage.PlanFor(plain, "", block("sim", time.Minute), now); p.Rung != "" || p.Provider != "sim" || p.Wait.IsZero() {
		t.Fatalf("plain seat: %+v", p)
	}
}

func TestLadderValidation(t *testing.T) {
	t.Parallel()
	for name, extra := range map[string]string{
		"top-level pin with a ladder": "model = \"x\"\n[[ladder]]\nname = \"a\"",
		"duplicate rung":              "[[ladder]]\nname = \"a\"\n[[ladder]]\nname = \"a\"",
		"bad rung name":               "[[ladder]]\nname = \"A b\"",
		"other harness":               "[[ladder]]\nname = \"a\"\nharness = \"claude-code\"",
		"reserved env":                "[env]\nPANTTY_RUNG = \"x\"",
		"bad check":                   "[done]\nchecks = [\"git-magic\"]",
		"bad backoff":                 "[recovery]\nbackoff = \"2h\"\nbackoff_max = \"1h\"",
	} {
		t.Run(name, func(t *testing.T) {
			home, work := t.TempDir(), t.TempDir()
			s, _ := state.Open(home, "lad")
			os.MkdirAll(s.Dir, 0o700)
			os.WriteFile(s.ConfigPath(), []byte(fmt.Sprintf("name = \"lad\"\nharness = \"sim\"\nworkdir = %q\n%s\n", work, extra)), 0o600)
			if _, err := s.LoadConfig(); err == nil || !strings.Contains(err.Error(), "seat.toml") {
				t.Fatalf("accepted (or unnamed error): %v", err)
			}
		})
	}
}

// ReleaseBlock ends only a block its predicate claims, and only a live one:
// a refusal's block stays.
func TestReleaseBlock(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	now := time.Now()
	note := func(b state.Block) bool { return b.Text == "predicted" }
	if err := outage.RecordBlock(home, "codex", state.Block{Until: now.Add(time.Hour), Text: "refused"}, now); err != nil {
		t.Fatal(err)
	}
	if gone, err := outage.ReleaseBlock(home, "codex", note, now); gone || err != nil {
		t.Fatalf("a refusal's block released: %v %v", gone, err)
	}
	if err := outage.RecordBlock(home, "other", state.Block{Until: now.Add(time.Hour), Text: "predicted"}, now); err != nil {
		t.Fatal(err)
	}
	if gone, err := outage.ReleaseBlock(home, "other", note, now); !gone || err != nil {
		t.Fatalf("a predicted block not released: %v %v", gone, err)
	}
	bs, err := outage.ReadBlocks(home)
	if _, held := bs["other"]; err != nil || held || bs["codex"].Text != "refused" {
		t.Fatalf("blocks after the release: %v %v", bs, err)
	}
	if gone, err := outage.ReleaseBlock(t.TempDir(), "codex", note, now); gone || err != nil {
		t.Fatalf("no providers.toml: %v %v", gone, err)
	}
}
