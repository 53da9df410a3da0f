package recover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/seat/state"
)

// The schedulers `recover install` knows: recover's own parent must be
// something that does not die with the workspace.
const (
	Cron    = "cron"
	Launchd = "launchd"
	Systemd = "systemd"
)

// Names of what install writes.
const (
	UnitName     = "pantty-recover"     // systemd: pantty-recover.service and .timer
	LaunchdLabel = "dev.pantty.recover" // launchd: dev.pantty.recover.plist
	LogName      = "recover.log"        // in $PANTTY_HOME: what the scheduled runs print
)

// Environment overrides, so tests (and unusual hosts) never touch the real
// crontab or user units.
const (
	CrontabEnv    = "PANTTY_CRONTAB"     // the crontab program
	SystemdDirEnv = "PANTTY_SYSTEMD_DIR" // the systemd user unit directory
	LaunchdDirEnv = "PANTTY_LAUNCHD_DIR" // the LaunchAgents directory
	SystemctlEnv  = "PANTTY_SYSTEMCTL"   // the systemctl program
	LaunchctlEnv  = "PANTTY_LAUNCHCTL"   // the launchctl program
)

// InstallOptions say what to install and with which programs.
type InstallOptions struct {
	Kind      string
	Home      string // absolute state root
	Pantty    string // absolute path of the pantty binary
	Interval  time.Duration
	Crontab   string // crontab program (default $PANTTY_CRONTAB, else "crontab")
	UnitDir   string // unit/agents directory (default per scheduler, or its env override)
	Systemctl string // systemctl program ($PANTTY_SYSTEMCTL); with a non-default UnitDir and none given, units are not enabled
	Launchctl string // launchctl program ($PANTTY_LAUNCHCTL); skipped when absent
}

// Entry is one installed scheduler entry, as recorded in recover-install.toml so
// uninstall removes exactly what install added and check knows what to check.
type Entry struct {
	Kind        string          `toml:"kind"`
	Interval    config.Duration `toml:"interval"`
	Files       []string        `toml:"files,omitempty"`
	CronLine    string          `toml:"cron_line,omitempty"`
	Crontab     string          `toml:"crontab,omitempty"`
	Enabled     string          `toml:"enabled,omitempty"` // the command that enabled it, or why it was not
	Control     string          `toml:"control,omitempty"` // systemctl / launchctl program used
	InstalledAt time.Time       `toml:"installed_at"`
}

// InstallRecord is $PANTTY_HOME/recover-install.toml.
type InstallRecord struct {
	Entries []Entry `toml:"entry"`
}

func installPath(home string) string { return filepath.Join(home, "recover-install.toml") }

// installFile is recover-install.toml bound to its record.
func installFile(home string) statedir.File[InstallRecord] {
	return statedir.Bind[InstallRecord](state.HomeTmpDir(home), installPath(home), state.ReadRegular)
}

// ReadInstall reads the install record; a missing one is an empty record.
func ReadInstall(home string) (InstallRecord, error) {
	var r InstallRecord
	if _, err := readOptional(installFile(home), &r); err != nil {
		return r, err
	}
	return r, nil
}

func writeInstall(home string, r InstallRecord) error {
	if len(r.Entries) == 0 {
		err := os.Remove(installPath(home))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return installFile(home).Write(r)
}

// ---- programs and directories ----

func (o InstallOptions) crontab() string {
	if o.Crontab != "" {
		return o.Crontab
	}
	if p := os.Getenv(CrontabEnv); p != "" {
		return p
	}
	return "crontab"
}

func (o InstallOptions) unitDir() (dir string, overridden bool, err error) {
	if o.UnitDir != "" {
		return o.UnitDir, true, nil
	}
	switch o.Kind {
	case Systemd:
		if d := os.Getenv(SystemdDirEnv); d != "" {
			return d, true, nil
		}
		base := os.Getenv("XDG_CONFIG_HOME")
		if base == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", false, err
			}
			base = filepath.Join(h, ".config")
		}
		return filepath.Join(base, "systemd", "user"), false, nil
	case Launchd:
		if d := os.Getenv(LaunchdDirEnv); d != "" {
			return d, true, nil
		}
		h, err := os.UserHomeDir()
		if err != nil {
			return "", false, err
		}
		return filepath.Join(h, "Library", "LaunchAgents"), false, nil
	}
	return "", false, nil
}

// controlProgram picks systemctl/launchctl: an explicit one (flag or env) is
// always used; the default is used only for the default unit directory, so a
// test's unit directory never reaches the person's real service manager.
func controlProgram(explicit, env, def string, overridden bool) string {
	if explicit != "" {
		return explicit
	}
	if p := os.Getenv(env); p != "" {
		return p
	}
	if overridden {
		return ""
	}
	if _, err := exec.LookPath(def); err != nil {
		return ""
	}
	return def
}

const commandTimeout = 30 * time.Second

// runProg runs a helper program (crontab, systemctl, …) with a timeout.
func runProg(stdin []byte, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = env
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("%s %s: timed out after %s", name, strings.Join(args, " "), commandTimeout)
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		// Said in the user's words: which program is missing and what to do,
		// not the exec package's "executable file not found in $PATH".
		return "", fmt.Errorf("%s is not installed here (not found on PATH); install it, or choose another scheduler (%s)", name, otherSchedulers(name))
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// otherSchedulers lists the install flags but the one whose program is
// missing (a hint that offers the scheduler that just failed helps nobody).
func otherSchedulers(missing string) string {
	var out []string
	for _, s := range []struct{ program, flag string }{{"crontab", "--cron"}, {"systemctl", "--systemd"}, {"launchctl", "--launchd"}} {
		if s.program != filepath.Base(missing) {
			out = append(out, s.flag)
		}
	}
	return strings.Join(out, ", ")
}

// readCrontab returns the current crontab ("no crontab" is empty).
func readCrontab(prog string) (string, error) {
	out, err := runProg(nil, nil, prog, "-l")
	if err != nil {
		if strings.Contains(strings.ToLower(err.Error()), "no crontab") {
			return "", nil
		}
		return "", err
	}
	return out, nil
}

// ---- install / uninstall ----

// Install writes (and enables, where it can) the scheduler entry that runs
// `pantty recover` every interval, replacing an earlier entry of the same kind
// for this state root. It returns what it did, line by line.
func Install(o InstallOptions) ([]string, error) {
	if !filepath.IsAbs(o.Home) || !filepath.IsAbs(o.Pantty) {
		return nil, fmt.Errorf("%w: the state root and the pantty binary must be absolute paths", state.ErrBadInput)
	}
	if o.Interval < time.Second {
		return nil, fmt.Errorf("%w: --interval %s is too short", state.ErrBadInput, o.Interval)
	}
	rec, err := ReadInstall(o.Home)
	if err != nil {
		return nil, err
	}
	e := Entry{Kind: o.Kind, Interval: config.Duration{Duration: o.Interval}, InstalledAt: time.Now().UTC()}
	var did []string
	switch o.Kind {
	case Cron:
		line, err := CronLine(o)
		if err != nil {
			return nil, err
		}
		prog := o.crontab()
		cur, err := readCrontab(prog)
		if err != nil {
			return nil, err
		}
		kept := withoutMarker(cur, cronMarker(o.Home))
		kept = append(kept, line)
		if _, err := runProg([]byte(strings.Join(kept, "\n")+"\n"), nil, prog, "-"); err != nil {
			return nil, err
		}
		e.CronLine, e.Crontab = line, prog
		did = append(did, fmt.Sprintf("crontab (%s): %s", prog, line), schedulerNote(Cron))
	case Systemd, Launchd:
		dir, overridden, err := o.unitDir()
		if err != nil {
			return nil, err
		}
		files := map[string]string{}
		if o.Kind == Systemd {
			s, t := SystemdUnits(o)
			files[filepath.Join(dir, UnitName+".service")] = s
			files[filepath.Join(dir, UnitName+".timer")] = t
		} else {
			files[filepath.Join(dir, LaunchdLabel+".plist")] = LaunchdPlist(o)
		}
		prev := map[string]bool{}
		for _, old := range rec.Entries {
			for _, f := range old.Files {
				prev[f] = true
			}
		}
		for path, text := range files {
			if cur, err := os.ReadFile(path); err == nil && string(cur) != text && !prev[path] {
				return nil, fmt.Errorf("%w: %s exists and was not written for %s (remove it, or install with another --unit-dir)", state.ErrBadInput, path, o.Home)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for path, text := range files {
			if err := fsatomic.WriteFile(state.HomeTmpDir(o.Home), path, []byte(text)); err != nil {
				return nil, err
			}
			if err := os.Chmod(path, 0o644); err != nil {
				return nil, err
			}
			e.Files = append(e.Files, path)
			did = append(did, "wrote "+path)
		}
		sortStrings(e.Files)
		if o.Kind == Systemd {
			prog := controlProgram(o.Systemctl, SystemctlEnv, "systemctl", overridden)
			e.Control = prog
			if prog == "" {
				e.Enabled = "not enabled: no systemctl for this unit directory"
			} else {
				if _, err := runProg(nil, nil, prog, "--user", "daemon-reload"); err != nil {
					return did, err
				}
				if _, err := runProg(nil, nil, prog, "--user", "enable", "--now", UnitName+".timer"); err != nil {
					return did, err
				}
				e.Enabled = prog + " --user enable --now " + UnitName + ".timer"
			}
		} else {
			prog := controlProgram(o.Launchctl, LaunchctlEnv, "launchctl", overridden)
			e.Control = prog
			if prog == "" {
				e.Enabled = "not loaded: no launchctl here"
			} else {
				plist := filepath.Join(dir, LaunchdLabel+".plist")
				runProg(nil, nil, prog, "unload", plist) // an earlier load of the same file
				if _, err := runProg(nil, nil, prog, "load", "-w", plist); err != nil {
					return did, err
				}
				e.Enabled = prog + " load -w " + plist
			}
		}
		did = append(did, e.Enabled)
		did = append(did, schedulerNote(o.Kind))
	default:
		return nil, fmt.Errorf("%w: unknown scheduler %q (want --cron, --launchd or --systemd)", state.ErrBadInput, o.Kind)
	}
	var out []Entry
	for _, old := range rec.Entries {
		if old.Kind != o.Kind {
			out = append(out, old)
		}
	}
	rec.Entries = append(out, e)
	if err := writeInstall(o.Home, rec); err != nil {
		return did, err
	}
	return did, nil
}

// schedulerNote says what the scheduler itself needs for the entry to revive
// seats with nobody logged in: the part of the setup pantty cannot do.
func schedulerNote(kind string) string {
	switch kind {
	case Systemd:
		u := os.Getenv("USER")
		if u == "" {
			u = "$USER"
		}
		state := "is not on"
		if _, err := os.Stat(filepath.Join("/var/lib/systemd/linger", u)); err == nil {
			state = "is on"
		}
		return fmt.Sprintf("note: a user timer runs after you log out only with lingering ('loginctl enable-linger %s'; it %s for %s); the service has KillMode=process so revived drivers outlive the sweep", u, state, u)
	case Launchd:
		return "note: a LaunchAgent runs only while you are logged in (your GUI session); for a machine nobody logs in to, run the same command from cron or a LaunchDaemon with UserName set"
	}
	return "note: cron runs the entry with PATH=/usr/bin:/bin and none of your variables; seats launch from the environment 'pantty seat start' recorded (launch-env.toml), and 'pantty recover check' proves it"
}

func withoutMarker(crontab, marker string) []string {
	var kept []string
	for _, l := range strings.Split(strings.TrimRight(crontab, "\n"), "\n") {
		if l == "" && len(kept) == 0 {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(l), marker) {
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// Uninstall removes what install added for the given kinds (all recorded ones
// when kinds is empty), and the record of it. crontab, when not empty, is the
// crontab program to run instead of the one install recorded (moved, or a
// different one on this PATH: recover uninstall --crontab).
func Uninstall(home string, kinds []string, crontab string) ([]string, error) {
	rec, err := ReadInstall(home)
	if err != nil {
		return nil, err
	}
	if len(rec.Entries) == 0 {
		return nil, fmt.Errorf("nothing installed for %s (no %s)", home, installPath(home))
	}
	want := func(k string) bool {
		if len(kinds) == 0 {
			return true
		}
		for _, x := range kinds {
			if x == k {
				return true
			}
		}
		return false
	}
	var did []string
	var kept []Entry
	for _, e := range rec.Entries {
		if !want(e.Kind) {
			kept = append(kept, e)
			continue
		}
		switch e.Kind {
		case Cron:
			if crontab != "" {
				e.Crontab = crontab
			}
			cur, err := readCrontab(e.Crontab)
			if err != nil {
				return did, err
			}
			lines := withoutMarker(cur, cronMarker(home))
			text := strings.Join(lines, "\n")
			if text != "" {
				text += "\n"
			}
			if _, err := runProg([]byte(text), nil, e.Crontab, "-"); err != nil {
				return did, err
			}
			did = append(did, "removed the crontab line ("+e.Crontab+")")
		case Systemd:
			if e.Control != "" && strings.HasPrefix(e.Enabled, e.Control) {
				if _, err := runProg(nil, nil, e.Control, "--user", "disable", "--now", UnitName+".timer"); err != nil {
					return did, err
				}
				did = append(did, e.Control+" --user disable --now "+UnitName+".timer")
			}
		case Launchd:
			if e.Control != "" && strings.HasPrefix(e.Enabled, e.Control) && len(e.Files) > 0 {
				if _, err := runProg(nil, nil, e.Control, "unload", e.Files[0]); err != nil {
					return did, err
				}
				did = append(did, e.Control+" unload "+e.Files[0])
			}
		}
		for _, f := range e.Files {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return did, err
			}
			did = append(did, "removed "+f)
		}
		if e.Kind == Systemd && e.Control != "" && strings.HasPrefix(e.Enabled, e.Control) {
			runProg(nil, nil, e.Control, "--user", "daemon-reload")
		}
	}
	rec.Entries = kept
	return did, writeInstall(home, rec)
}
