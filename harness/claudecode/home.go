package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// PrepareHome makes a HOME in which Claude Code starts straight into its input
// box, without the dialogs a person answers once (theme and onboarding, "use this
// API key?", "trust this folder?"): it sets, in $home/.claude.json,
//
//	hasCompletedOnboarding: true
//	customApiKeyResponses.approved: [the last 20 characters of apiKey]
//	projects[<workdir>].hasTrustDialogAccepted: true   (for each workdir)
//
// Everything else already in the file is kept, so it can be pointed at a real
// HOME too. For a seat that sets CLAUDE_CONFIG_DIR pass that directory instead:
// claude then reads .claude.json from there, not from HOME (measured). The file is written atomically with mode 0600. It is for tests and
// for `pantty measure`; a person's seat normally runs in a HOME where these were
// answered by hand. apiKey may be empty (a HOME for an OAuth login).
func PrepareHome(home, apiKey string, workdirs ...string) error {
	if !filepath.IsAbs(home) {
		return fmt.Errorf("claude-code: HOME %q is not absolute", home)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	path := filepath.Join(home, ".claude.json")
	cfg, err := readClaudeJSON(path)
	if err != nil {
		return err
	}
	if _, err := answerDialogs(cfg, apiKey, workdirs); err != nil {
		return err
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(home, ".claude.json.tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readClaudeJSON reads .claude.json as a JSON object (empty when there is
// none); a file that is not one is an error, never overwritten.
func readClaudeJSON(path string) (map[string]any, error) {
	cfg := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("claude-code: %s: %v (not overwritten)", path, err)
		}
	}
	return cfg, nil
}

// answerDialogs sets in cfg (.claude.json) the answers PrepareHome writes and
// says which were not there yet, one line each: PrepareHome writes them,
// HomeUnprepared reports them, so the check and the fix cannot disagree.
func answerDialogs(cfg map[string]any, apiKey string, workdirs []string) (changed []string, err error) {
	if cfg["hasCompletedOnboarding"] != true {
		cfg["hasCompletedOnboarding"] = true
		changed = append(changed, "hasCompletedOnboarding is not set (claude would run its onboarding, which checks api.anthropic.com even behind a gateway)")
	}
	if apiKey != "" {
		tail := apiKey[max(0, len(apiKey)-20):]
		resp := hookwire.JSONObject(cfg, "customApiKeyResponses")
		approved, _ := resp["approved"].([]any)
		if !slices.Contains(approved, any(tail)) {
			approved = append(approved, tail)
			changed = append(changed, fmt.Sprintf("the ANTHROPIC_API_KEY ending …%s is not approved (claude would ask \"use this API key?\")", apiKey[max(0, len(apiKey)-4):]))
		}
		resp["approved"] = approved
		if _, ok := resp["rejected"]; !ok {
			resp["rejected"] = []any{}
		}
	}
	projects := hookwire.JSONObject(cfg, "projects")
	for _, w := range workdirs {
		abs, err := filepath.Abs(w)
		if err != nil {
			return nil, err
		}
		dirs := []string{abs}
		// Claude Code asks "trust this folder?" for the git repository that
		// holds the workdir, not for the workdir itself (measured on 2.1.328: a
		// workdir below a .git directory stopped at the dialog although the
		// workdir was trusted), so the enclosing root is trusted too.
		if root := gitRoot(abs); root != "" && root != abs {
			dirs = append(dirs, root)
		}
		for _, d := range dirs {
			p := hookwire.JSONObject(projects, d)
			if p["hasTrustDialogAccepted"] != true {
				p["hasTrustDialogAccepted"] = true
				what := d
				if d != abs {
					what += ", the git repository holding " + abs + ","
				}
				changed = append(changed, fmt.Sprintf("%s is not trusted (claude would ask \"trust this folder?\")", what))
			}
		}
	}
	return changed, nil
}

// gitRoot is the nearest directory at or above dir that holds a .git entry
// (a directory, or a file as in a worktree), "" when there is none.
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// PrepareSeatHome (harness.Capabilities.PrepareSeatHome) runs PrepareHome for a seat: in the
// directory claude will read (.claude.json under $CLAUDE_CONFIG_DIR when the
// seat sets or passes it, else under the seat's HOME), with the API key the
// harness will see (ANTHROPIC_API_KEY from the seat's env or pass_env) and the
// seat's workdir. "Will see" is launch.PlannedEnv: the recorded launch-env.toml
// with this shell filling in what it lacks, as the next `seat start` launches,
// so a key recorded earlier is approved even when this shell has none.
//
// The home is usually the person's own: a file it changes is first kept
// beside it as .claude.json.before-pantty-<UTC time> (0600), and a home with
// nothing to change is left untouched (`pantty seat prepare-home --dry-run`
// lists what would change without writing: HomeUnprepared).
func (Adapter) PrepareSeatHome(s state.Seat, c config.Config, _ string) ([]string, error) {
	env, _, err := launch.PlannedEnv(s, c, os.Environ(), false, nil)
	if err != nil {
		return nil, err
	}
	dir, key, err := claudeHome(env)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ".claude.json")
	todo, err := Adapter{}.HomeUnprepared(s, c, env)
	if err != nil {
		return nil, err
	}
	if len(todo) == 0 {
		return []string{path + ": nothing to change (onboarding done, the key approved, the workdir trusted)"}, nil
	}
	var backup string
	if old, err := os.ReadFile(path); err == nil {
		backup = path + ".before-pantty-" + time.Now().UTC().Format("20060102T150405Z")
		if err := fsatomic.WriteFile(dir, backup, old); err != nil {
			return nil, fmt.Errorf("keep the previous %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := PrepareHome(dir, key, c.Workdir); err != nil {
		return nil, err
	}
	var wrote []string
	if backup != "" {
		wrote = append(wrote, "the previous "+path+" is kept as "+backup)
	}
	wrote = append(wrote, []string{
		path + ": hasCompletedOnboarding = true (no theme and onboarding screens)",
		fmt.Sprintf("%s: projects[%q].hasTrustDialogAccepted = true (no \"trust this folder?\")", path, c.Workdir),
	}...)
	if key != "" {
		wrote = append(wrote, fmt.Sprintf("%s: customApiKeyResponses.approved holds the last 20 characters of ANTHROPIC_API_KEY (…%s; no \"use this API key?\")",
			path, key[max(0, len(key)-4):]))
	} else {
		wrote = append(wrote, "no ANTHROPIC_API_KEY in the seat's env or pass_env: no key approved (an OAuth login needs none; see docs/real-seats.md)")
	}
	return wrote, nil
}

// HomeUnprepared (harness.Capabilities.HomeUnprepared) lists what
// PrepareSeatHome would still change in the .claude.json the harness reads
// with env: onboarding not completed, the key not approved, the workdir (or
// its git root) not trusted.
func (Adapter) HomeUnprepared(_ state.Seat, c config.Config, env map[string]string) ([]string, error) {
	dir, key, err := claudeHome(env)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ".claude.json")
	cfg, err := readClaudeJSON(path)
	if err != nil {
		return nil, err
	}
	changed, err := answerDialogs(cfg, key, []string{c.Workdir})
	if len(changed) > 0 {
		changed[0] = "in " + path + ": " + changed[0]
	}
	return changed, err
}

// claudeHome is the directory holding the .claude.json the harness reads
// ($CLAUDE_CONFIG_DIR, else HOME) and the API key it sees, from its environment.
func claudeHome(env map[string]string) (dir, key string, err error) {
	dir = env["CLAUDE_CONFIG_DIR"]
	if dir == "" {
		dir = env["HOME"]
	}
	if dir == "" {
		return "", "", errors.New("claude-code: neither CLAUDE_CONFIG_DIR nor HOME is set for the harness")
	}
	return dir, env["ANTHROPIC_API_KEY"], nil
}
