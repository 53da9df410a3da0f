package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
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
	cfg := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("claude-code: %s: %v (not overwritten)", path, err)
		}
	}
	cfg["hasCompletedOnboarding"] = true
	if apiKey != "" {
		tail := apiKey[max(0, len(apiKey)-20):]
		resp := seat.JSONObject(cfg, "customApiKeyResponses")
		approved, _ := resp["approved"].([]any)
		if !slices.Contains(approved, any(tail)) {
			approved = append(approved, tail)
		}
		resp["approved"] = approved
		if _, ok := resp["rejected"]; !ok {
			resp["rejected"] = []any{}
		}
	}
	projects := seat.JSONObject(cfg, "projects")
	for _, w := range workdirs {
		abs, err := filepath.Abs(w)
		if err != nil {
			return err
		}
		seat.JSONObject(projects, abs)["hasTrustDialogAccepted"] = true
		// Claude Code asks "trust this folder?" for the git repository that
		// holds the workdir, not for the workdir itself (measured on 2.1.328: a
		// workdir below a .git directory stopped at the dialog although the
		// workdir was trusted), so the enclosing root is trusted too.
		if root := gitRoot(abs); root != "" && root != abs {
			seat.JSONObject(projects, root)["hasTrustDialogAccepted"] = true
		}
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
// seat's workdir.
func (Adapter) PrepareSeatHome(_ seat.Seat, c config.Config, _ string) ([]string, error) {
	dir := harnessVar(c, "CLAUDE_CONFIG_DIR", false)
	if dir == "" {
		dir = harnessVar(c, "HOME", true)
	}
	if dir == "" {
		return nil, errors.New("claude-code: neither CLAUDE_CONFIG_DIR nor HOME is set for the harness")
	}
	key := harnessVar(c, "ANTHROPIC_API_KEY", false)
	if err := PrepareHome(dir, key, c.Workdir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ".claude.json")
	wrote := []string{
		path + ": hasCompletedOnboarding = true (no theme and onboarding screens)",
		fmt.Sprintf("%s: projects[%q].hasTrustDialogAccepted = true (no \"trust this folder?\")", path, c.Workdir),
	}
	if key != "" {
		wrote = append(wrote, fmt.Sprintf("%s: customApiKeyResponses.approved holds the last 20 characters of ANTHROPIC_API_KEY (…%s; no \"use this API key?\")",
			path, key[max(0, len(key)-4):]))
	} else {
		wrote = append(wrote, "no ANTHROPIC_API_KEY in the seat's env or pass_env: no key approved (an OAuth login needs none; see docs/real-seats.md)")
	}
	return wrote, nil
}
