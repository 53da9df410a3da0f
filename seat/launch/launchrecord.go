package launch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/seat/state"
)

// RecordLaunchEnv takes what the harness needs from the caller's environment
// and stores it as launch-env.toml. With refresh false an existing record is
// kept (a second `seat start` from another shell must not drop the key the
// first one recorded) and only pass_env names it lacks are filled in from the
// caller; with refresh true (`seat start --refresh-env`, for a rotated key) the
// caller's environment replaces it. It returns the record now in force and a
// line saying what it did.
func RecordLaunchEnv(s state.Seat, c config.Config, caller []string, by string, refresh bool) (state.LaunchEnv, string, error) {
	from := envMap(caller)
	old, err := s.LaunchEnvFile().Read()
	switch {
	case err == nil && !refresh:
		added := []string{}
		for _, k := range c.PassEnv {
			if _, ok := old.Vars[k]; !ok {
				if v, ok := from[k]; ok {
					if old.Vars == nil {
						old.Vars = map[string]string{}
					}
					old.Vars[k] = v
					added = append(added, k)
				}
			}
		}
		old.Missing = missingPass(c, old.Vars)
		if len(added) == 0 {
			return old, "kept the recorded environment from " + old.RecordedAt.Format(time.RFC3339) + " (--refresh-env takes this shell's)", nil
		}
		if err := s.LaunchEnvFile().Write(old); err != nil {
			return old, "", err
		}
		return old, "added " + strings.Join(added, ", ") + " to the recorded environment", nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return state.LaunchEnv{}, "", fmt.Errorf("seat %q: %w", s.Name, err)
	}
	rec := state.LaunchEnv{RecordedAt: time.Now().UTC(), By: by, Vars: callerVars(from, c), Command: old.Command, Binary: old.Binary}
	rec.Missing = missingPass(c, rec.Vars)
	if err := s.LaunchEnvFile().Write(rec); err != nil {
		return rec, "", err
	}
	return rec, fmt.Sprintf("recorded the harness environment (%d variables) in %s", len(rec.Vars), s.LaunchEnvPath()), nil
}

// missingPass lists the pass_env names vars lacks.
func missingPass(c config.Config, vars map[string]string) []string {
	var out []string
	for _, k := range c.PassEnv {
		if _, ok := vars[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// callerVars is the part of a caller's environment a harness may inherit: the
// allow-list, LC_* and the seat's pass_env names; nested-session markers never.
func callerVars(from map[string]string, c config.Config) map[string]string {
	env := map[string]string{}
	for _, k := range passEnv {
		if v, ok := from[k]; ok {
			env[k] = v
		}
	}
	for k, v := range from {
		if strings.HasPrefix(k, "LC_") {
			env[k] = v
		}
	}
	for _, k := range c.PassEnv {
		if v, ok := from[k]; ok && !config.IsNestedMarker(k) {
			env[k] = v
		}
	}
	return env
}

func envMap(kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// AdoptLaunchEnv makes this process's environment the recorded one for every
// variable a harness may inherit (the allow-list, LC_*, the seat's pass_env):
// set from the record, or unset when the record lacks it. Every lookup a driver
// then makes on the harness's behalf (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, the
// PATH a binary and tmux are found on) and every environment it builds sees what
// the person's shell had, whoever started the driver — cron included. The
// variables pantty itself uses to find the seat (PANTTY_*) are never recorded
// and stay as they are.
func AdoptLaunchEnv(l state.LaunchEnv, c config.Config) {
	names := map[string]bool{}
	for _, k := range passEnv {
		names[k] = true
	}
	for _, k := range c.PassEnv {
		names[k] = true
	}
	for k := range envMap(os.Environ()) {
		if strings.HasPrefix(k, "LC_") {
			names[k] = true
		}
	}
	for k := range l.Vars {
		names[k] = true
	}
	for k := range names {
		if v, ok := l.Vars[k]; ok {
			os.Setenv(k, v)
		} else {
			os.Unsetenv(k)
		}
	}
}

// ResolveBinary finds the harness command on the given PATH the way the pane's
// exec will: a name with a slash must be an executable file, a bare name is
// looked up on path. The error says which PATH was searched, since the usual
// cause is a scheduler's PATH (cron: /usr/bin:/bin) without the harness on it.
func ResolveBinary(command, path string) (string, error) {
	if strings.Contains(command, "/") {
		if err := executable(command); err != nil {
			return "", fmt.Errorf("harness binary %s: %v", command, err)
		}
		return command, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // exec ignores relative PATH entries for a detached process; so does pantty
		}
		p := filepath.Join(dir, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("harness binary %q not found on the recorded PATH (%s); run 'pantty seat start --refresh-env' from a shell where it is, or set command to an absolute path in seat.toml", command, path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// maxEnvFile bounds an env_file: it holds variables, not data.
const maxEnvFile = 64 << 10

// ReadEnvFile reads a seat's env_file in systemd's EnvironmentFile syntax:
// one KEY=VALUE a line, blank lines and lines starting with # or ; ignored, a
// value optionally in single or double quotes (in double quotes \" \\ \n \t
// \$ are escapes), an odd number of trailing backslashes continuing the line.
// Unlike systemd, a line that is not an assignment is an error naming the line,
// not a silent skip: a typo in a credential file must not become a seat without
// its key.
//
// The file holds what the harness is trusted with, so whoever can write it runs
// code as the harness: a symlink is followed (secret managers such as agenix
// and sops-nix link their files) but the file it reaches must be owned by this
// user or root, writable by nobody else, and outside the seat's workdir (which
// the model writes); and a variable that changes what runs rather than what it
// knows (LD_PRELOAD, NODE_OPTIONS, …: loaderVar) is refused — seat.toml [env]
// sets those when a person means it.
func ReadEnvFile(path, workdir string) (map[string]string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("env_file: %w", err)
	}
	if err := envFileTrusted(path, real, workdir); err != nil {
		return nil, err
	}
	data, err := fsafe.ReadBounded(real, maxEnvFile)
	if err != nil {
		return nil, fmt.Errorf("env_file: %w", err)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("env_file %s: a NUL byte at offset %d (not a text file)", path, i)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxEnvFile+1)
	n, pending, start := 0, "", 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if pending == "" {
			start = n
		}
		if trailing := len(line) - len(strings.TrimRight(line, `\`)); trailing%2 == 1 {
			pending += line[:len(line)-1]
			continue
		}
		line, pending = pending+line, ""
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		k = strings.TrimSpace(k)
		if !ok || !config.ValidEnvName(k) {
			return nil, fmt.Errorf("env_file %s: line %d: want KEY=VALUE", path, start)
		}
		if config.IsNestedMarker(k) || k == SeatEnv || k == SeatHomeEnv {
			return nil, fmt.Errorf("env_file %s: line %d: %s is reserved (pantty sets or strips it)", path, start, k)
		}
		if loaderVar(k) {
			return nil, fmt.Errorf("env_file %s: line %d: %s changes what the harness runs, not what it knows; set it in seat.toml [env] if you mean it", path, start, k)
		}
		val, err := envValue(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("env_file %s: line %d: %v", path, start, err)
		}
		out[k] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env_file %s: %v", path, err)
	}
	if pending != "" {
		return nil, fmt.Errorf("env_file %s: line %d: a trailing backslash continues past the end of the file", path, start)
	}
	return out, nil
}

// envFileTrusted refuses an env_file (resolved to real) that someone other
// than this user could have written.
func envFileTrusted(path, real, workdir string) error {
	if workdir != "" && state.Within(real, filepath.Clean(workdir)) {
		return fmt.Errorf("env_file %s: inside the seat's workdir %s, where the seat's model can write it; keep it outside", path, workdir)
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return fmt.Errorf("env_file: %w", err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("env_file %s: writable by group or others (%s); chmod go-w it", path, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uint32(os.Getuid()) && st.Uid != 0 {
		return fmt.Errorf("env_file %s: owned by uid %d, neither you nor root", path, st.Uid)
	}
	return nil
}

// loaderVar names the variables that make a process load or run other code
// (the dynamic loader's, Node's options, a shell's start-up file).
func loaderVar(k string) bool {
	switch {
	case strings.HasPrefix(k, "LD_"), strings.HasPrefix(k, "DYLD_"):
		return true
	}
	switch k {
	case "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "PYTHONSTARTUP", "PERL5OPT":
		return true
	}
	return false
}

// envValue unquotes one env_file value.
func envValue(v string) (string, error) {
	if len(v) >= 1 && (v[0] == '"' || v[0] == '\'') {
		q := v[0]
		if len(v) < 2 || v[len(v)-1] != q {
			return "", errors.New("unterminated quote")
		}
		body := v[1 : len(v)-1]
		if q == '\'' {
			return body, nil
		}
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '\\' && i+1 < len(body) {
				i++
				switch body[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(body[i])
				}
				continue
			}
			b.WriteByte(c)
		}
		return b.String(), nil
	}
	return v, nil
}

// LaunchProblems says what would stop the seat's harness from launching the
// way `seat start` recorded, checked from whatever environment runs it (recover
// under a scheduler's bare environment is the one that matters): the record
// exists and is readable, every pass_env name is in it, env_file reads, and the
// harness binary resolves on the recorded PATH. nil means launchable.
func LaunchProblems(s state.Seat, c config.Config) []string {
	var out []string
	rec, err := s.LaunchEnvFile().Read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []string{fmt.Sprintf("seat %s: no launch-env.toml, so a launch by recover gets the scheduler's environment (cron: PATH=/usr/bin:/bin, no API key); run 'pantty seat start --refresh-env %s' from your shell", s.Name, s.Name)}
	case err != nil:
		return []string{fmt.Sprintf("seat %s: %v", s.Name, err)}
	}
	if m := missingPass(c, rec.Vars); len(m) > 0 {
		out = append(out, fmt.Sprintf("seat %s: pass_env %s missing from launch-env.toml (set it and run 'pantty seat start --refresh-env %s')", s.Name, strings.Join(m, ", "), s.Name))
	}
	if c.EnvFile != "" {
		if _, err := ReadEnvFile(c.EnvFile, c.Workdir); err != nil {
			out = append(out, fmt.Sprintf("seat %s: %v", s.Name, err))
		}
	}
	path := rec.Vars["PATH"]
	if v, ok := c.Env["PATH"]; ok {
		path = v
	}
	switch {
	case rec.Command != "":
		if _, err := ResolveBinary(rec.Command, path); err != nil {
			out = append(out, fmt.Sprintf("seat %s: %v", s.Name, err))
		}
	case c.Command != "":
		if _, err := ResolveBinary(c.Command, path); err != nil {
			out = append(out, fmt.Sprintf("seat %s: %v", s.Name, err))
		}
	}
	return out
}
