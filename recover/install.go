package recover

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/seat"
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
	Kind        string        `toml:"kind"`
	Interval    seat.Duration `toml:"interval"`
	Files       []string      `toml:"files,omitempty"`
	CronLine    string        `toml:"cron_line,omitempty"`
	Crontab     string        `toml:"crontab,omitempty"`
	Enabled     string        `toml:"enabled,omitempty"` // the command that enabled it, or why it was not
	Control     string        `toml:"control,omitempty"` // systemctl / launchctl program used
	InstalledAt time.Time     `toml:"installed_at"`
}

// InstallRecord is $PANTTY_HOME/recover-install.toml.
type InstallRecord struct {
	Entries []Entry `toml:"entry"`
}

func installPath(home string) string { return filepath.Join(home, "recover-install.toml") }

// ReadInstall reads the install record; a missing one is an empty record.
func ReadInstall(home string) (InstallRecord, error) {
	var r InstallRecord
	if _, err := readOptional(installPath(home), &r); err != nil {
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
	return seat.WriteState(seat.HomeTmpDir(home), installPath(home), r)
}

// ---- rendering (the same text as the templates in scripts/) ----

func (o InstallOptions) intervalArg() string { return o.Interval.String() }

func cronSchedule(d time.Duration) (string, error) {
	if d < time.Minute || d%time.Minute != 0 || d > time.Hour {
		return "", fmt.Errorf("%w: cron runs on whole minutes: --interval %s must be 1m..60m", seat.ErrBadInput, d)
	}
	switch m := int(d / time.Minute); m {
	case 1:
		return "* * * * *", nil
	case 60:
		return "0 * * * *", nil
	default:
		return fmt.Sprintf("*/%d * * * *", m), nil
	}
}

// cronMarker tags the line install adds, per state root (a shell comment at
// the end of the line; cron's % is escaped there too).
func cronMarker(home string) string {
	return "# pantty-recover " + strings.ReplaceAll(home, "%", `\%`)
}

// shQuote quotes a word for /bin/sh; cron turns an unescaped % into a newline,
// so % is escaped for cron as well.
func shQuote(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	return strings.ReplaceAll(q, "%", `\%`)
}

// CronLine renders the crontab line.
func CronLine(o InstallOptions) (string, error) {
	sched, err := cronSchedule(o.Interval)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(o.Home+o.Pantty, "\n\r") {
		return "", fmt.Errorf("%w: a path with a newline cannot go in a crontab line", seat.ErrBadInput)
	}
	cmd := fmt.Sprintf("PANTTY_HOME=%s %s recover --interval %s", shQuote(o.Home), shQuote(o.Pantty), o.intervalArg())
	return fmt.Sprintf("%s %s >>%s 2>&1 %s", sched, cmd, shQuote(filepath.Join(o.Home, LogName)), cronMarker(o.Home)), nil
}

// cronCommand extracts the command cron runs from one of our lines (cron's \%
// escapes undone, the log redirection and the marker dropped).
func cronCommand(line string) (string, error) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return "", fmt.Errorf("crontab line %q has no command", line)
	}
	rest := line
	for i := 0; i < 5; i++ {
		rest = strings.TrimLeft(rest, " \t")
		rest = rest[strings.IndexAny(rest, " \t"):]
	}
	rest = strings.TrimSpace(rest)
	if i := strings.Index(rest, " >>"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ReplaceAll(rest, `\%`, "%"), nil
}

func xmlText(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// LaunchdPlist renders the launchd agent.
func LaunchdPlist(o InstallOptions) string {
	args := []string{o.Pantty, "recover", "--interval", o.intervalArg()}
	var a strings.Builder
	for _, x := range args {
		fmt.Fprintf(&a, "\t\t<string>%s</string>\n", xmlText(x))
	}
	logp := xmlText(filepath.Join(o.Home, LogName))
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- pantty recover: one recovery sweep over the seats in ` + xmlText(strings.ReplaceAll(o.Home, "--", "- -")) + ` every ` + o.intervalArg() + ` -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + LaunchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
` + a.String() + `	</array>
	<key>EnvironmentVariables</key>
	<dict>
		<key>PANTTY_HOME</key>
		<string>` + xmlText(o.Home) + `</string>
	</dict>
	<key>StartInterval</key>
	<integer>` + strconv.Itoa(int(o.Interval/time.Second)) + `</integer>
	<key>RunAtLoad</key>
	<true/>
	<key>StandardOutPath</key>
	<string>` + logp + `</string>
	<key>StandardErrorPath</key>
	<string>` + logp + `</string>
</dict>
</plist>
`
}

// sdQuote quotes one word for a systemd unit (ExecStart=, Environment=): bare
// when it is plain, else double-quoted; % is doubled everywhere (specifiers).
func sdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;$") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// SystemdUnits renders the user service and its timer.
func SystemdUnits(o InstallOptions) (service, timer string) {
	service = `[Unit]
Description=pantty recover: one recovery sweep over the seats in ` + strings.ReplaceAll(o.Home, "%", "%%") + `
Documentation=https://github.com/pantty/pantty/blob/main/docs/recover.md

[Service]
Type=oneshot
Environment=` + sdQuote("PANTTY_HOME="+o.Home) + `
ExecStart=` + sdQuote(o.Pantty) + ` recover --interval ` + o.intervalArg() + `
`
	timer = `[Unit]
Description=run pantty recover every ` + o.intervalArg() + `

[Timer]
OnBootSec=` + o.intervalArg() + `
OnUnitActiveSec=` + o.intervalArg() + `
AccuracySec=1s

[Install]
WantedBy=timers.target
`
	return service, timer
}

// Render returns what install would write, for --print.
func Render(o InstallOptions) (string, error) {
	switch o.Kind {
	case Cron:
		l, err := CronLine(o)
		return l + "\n", err
	case Launchd:
		return LaunchdPlist(o), nil
	case Systemd:
		s, t := SystemdUnits(o)
		return "# " + UnitName + ".service\n" + s + "\n# " + UnitName + ".timer\n" + t, nil
	}
	return "", fmt.Errorf("%w: unknown scheduler %q", seat.ErrBadInput, o.Kind)
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
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
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
		return nil, fmt.Errorf("%w: the state root and the pantty binary must be absolute paths", seat.ErrBadInput)
	}
	if o.Interval < time.Second {
		return nil, fmt.Errorf("%w: --interval %s is too short", seat.ErrBadInput, o.Interval)
	}
	rec, err := ReadInstall(o.Home)
	if err != nil {
		return nil, err
	}
	e := Entry{Kind: o.Kind, Interval: seat.Duration{Duration: o.Interval}, InstalledAt: time.Now().UTC()}
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
		did = append(did, fmt.Sprintf("crontab (%s): %s", prog, line))
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
				return nil, fmt.Errorf("%w: %s exists and was not written for %s (remove it, or install with another --unit-dir)", seat.ErrBadInput, path, o.Home)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for path, text := range files {
			if err := seat.WriteFile(seat.HomeTmpDir(o.Home), path, []byte(text)); err != nil {
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
	default:
		return nil, fmt.Errorf("%w: unknown scheduler %q (want --cron, --launchd or --systemd)", seat.ErrBadInput, o.Kind)
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
// when kinds is empty), and the record of it.
func Uninstall(home string, kinds []string) ([]string, error) {
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

// ---- check ----

// CheckResult is one installed entry's check.
type CheckResult struct {
	Kind     string   `json:"kind"`
	OK       bool     `json:"ok"`
	Passed   []string `json:"passed"`
	Problems []string `json:"problems"`
}

// Check asserts that every recorded entry is installed and loadable: it is
// present where the scheduler reads it; its unit or plist passes the platform's
// own linter where one exists (systemd-analyze verify, plutil -lint) or an XML
// parse; its exact command runs in the scheduler's minimal environment with
// --dry-run and produces a sweep report; and the last real sweep is younger
// than two intervals. Any failure is a problem named in the result.
func Check(home string, now time.Time) ([]CheckResult, error) {
	rec, err := ReadInstall(home)
	if err != nil {
		return nil, err
	}
	if len(rec.Entries) == 0 {
		return nil, fmt.Errorf("not installed: no %s (run 'pantty recover install --cron|--launchd|--systemd')", installPath(home))
	}
	var out []CheckResult
	for _, e := range rec.Entries {
		r := CheckResult{Kind: e.Kind, Passed: []string{}, Problems: []string{}}
		pass := func(f string, a ...any) { r.Passed = append(r.Passed, fmt.Sprintf(f, a...)) }
		fail := func(f string, a ...any) { r.Problems = append(r.Problems, fmt.Sprintf(f, a...)) }
		var argv []string // the entry's command
		var env []string  // the scheduler's environment for it
		var shell string  // cron: the command line for /bin/sh
		switch e.Kind {
		case Cron:
			cur, err := readCrontab(e.Crontab)
			if err != nil {
				fail("crontab -l: %v", err)
				break
			}
			found := ""
			for _, l := range strings.Split(cur, "\n") {
				if strings.HasSuffix(strings.TrimSpace(l), cronMarker(home)) {
					found = strings.TrimSpace(l)
				}
			}
			if found == "" {
				fail("the crontab (%s -l) has no pantty-recover line for %s", e.Crontab, home)
				break
			}
			if _, err := cronSchedule(e.Interval.Duration); err != nil {
				fail("%v", err)
			}
			pass("crontab has the entry: %s", found)
			if shell, err = cronCommand(found); err != nil {
				fail("%v", err)
			}
			env = minimalEnv("/usr/bin:/bin", nil)
		case Systemd:
			if len(e.Files) != 2 {
				fail("the install record lists %d unit files, want 2", len(e.Files))
				break
			}
			var svc string
			for _, f := range e.Files {
				b, err := os.ReadFile(f)
				if err != nil {
					fail("unit %s: %v", f, err)
					continue
				}
				if strings.HasSuffix(f, ".service") {
					svc = string(b)
				}
			}
			if len(r.Problems) > 0 {
				break
			}
			pass("units present: %s", strings.Join(e.Files, ", "))
			if sa, err := exec.LookPath("systemd-analyze"); err == nil {
				rt := os.Getenv("XDG_RUNTIME_DIR")
				if rt == "" {
					d, err := os.MkdirTemp("", "pantty-check-")
					if err == nil {
						defer os.RemoveAll(d)
						rt = d
					}
				}
				venv := append(os.Environ(), "XDG_RUNTIME_DIR="+rt)
				if out, err := runProg(nil, venv, sa, append([]string{"--user", "verify"}, e.Files...)...); err != nil {
					fail("systemd-analyze verify: %v %s", err, strings.TrimSpace(out))
				} else {
					pass("systemd-analyze --user verify: clean")
				}
			} else {
				pass("systemd-analyze not available here: units parsed by pantty only")
			}
			var senv map[string]string
			argv, senv, err = parseService(svc)
			if err != nil {
				fail("%v", err)
				break
			}
			env = minimalEnv("/usr/local/bin:/usr/bin:/bin", senv)
		case Launchd:
			if len(e.Files) != 1 {
				fail("the install record lists %d plist files, want 1", len(e.Files))
				break
			}
			b, err := os.ReadFile(e.Files[0])
			if err != nil {
				fail("plist: %v", err)
				break
			}
			pass("agent present: %s", e.Files[0])
			if pl, err := exec.LookPath("plutil"); err == nil {
				if _, err := runProg(nil, nil, pl, "-lint", e.Files[0]); err != nil {
					fail("plutil -lint: %v", err)
				} else {
					pass("plutil -lint: OK")
				}
			}
			var penv map[string]string
			var interval int
			argv, penv, interval, err = parsePlist(b)
			if err != nil {
				fail("plist does not parse as a launchd agent: %v", err)
				break
			}
			pass("plist parses as XML: Label, ProgramArguments, StartInterval %ds", interval)
			env = minimalEnv("/usr/bin:/bin:/usr/sbin:/sbin", penv)
		}
		if len(r.Problems) == 0 {
			if why := runEntry(argv, shell, env); why != "" {
				fail("%s", why)
			} else {
				pass("the entry's command ran in the scheduler's environment with --dry-run and printed a sweep report")
			}
		}
		last, err := ReadLastSweep(home)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fail("no sweep has run yet (no %s): the scheduler has not run the entry", LastSweepPath(home))
		case err != nil:
			fail("last sweep record: %v", err)
		case now.Sub(last.At) > 2*e.Interval.Duration:
			fail("the last sweep ran %s ago (at %s), more than two intervals (%s): the scheduler is not running the entry",
				shortDur(now.Sub(last.At)), last.At.Format(time.RFC3339), 2*e.Interval.Duration)
		default:
			pass("last sweep %s ago (exit %d)", shortDur(now.Sub(last.At)), last.Code)
		}
		r.OK = len(r.Problems) == 0
		out = append(out, r)
	}
	return out, nil
}

// minimalEnv is the environment a scheduler gives its jobs: nothing of the
// installing shell, a fixed PATH, the user's identity, plus the entry's own
// variables.
func minimalEnv(path string, extra map[string]string) []string {
	env := []string{"PATH=" + path, "SHELL=/bin/sh"}
	if h, err := os.UserHomeDir(); err == nil {
		env = append(env, "HOME="+h)
	}
	for _, k := range []string{"USER", "LOGNAME"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// runEntry runs the entry's command with --dry-run --json and requires a sweep
// report on its stdout (exit 1 or 4 are verdicts about seats, not about the
// entry; anything unparseable means the entry does not work).
func runEntry(argv []string, shell string, env []string) string {
	var out string
	var err error
	if shell != "" {
		out, err = runProg(nil, env, "/bin/sh", "-c", shell+" --dry-run --json")
	} else if len(argv) > 0 {
		out, err = runProg(nil, env, argv[0], append(argv[1:], "--dry-run", "--json")...)
	} else {
		return "no command found in the entry"
	}
	var rep Report
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil || !rep.DryRun {
		if err == nil {
			err = fmt.Errorf("output is not a sweep report: %q", firstLine(out))
		}
		return fmt.Sprintf("the entry's command does not run in the scheduler's environment: %v", err)
	}
	return ""
}

func firstLine(s string) string {
	s = oneLine(s)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// parseService reads ExecStart= and Environment= from the service we wrote.
func parseService(text string) ([]string, map[string]string, error) {
	var argv []string
	env := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		switch k {
		case "ExecStart":
			w, err := sdWords(v)
			if err != nil {
				return nil, nil, fmt.Errorf("ExecStart: %v", err)
			}
			argv = w
		case "Environment":
			w, err := sdWords(v)
			if err != nil {
				return nil, nil, fmt.Errorf("Environment: %v", err)
			}
			for _, kv := range w {
				if a, b, ok := strings.Cut(kv, "="); ok {
					env[a] = b
				}
			}
		}
	}
	if len(argv) == 0 {
		return nil, nil, fmt.Errorf("the service has no ExecStart=")
	}
	return argv, env, nil
}

// sdWords splits a systemd command line the way sdQuote writes it.
func sdWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+1 < len(s) && s[i+1] == '%':
			cur.WriteByte('%')
			i++
			have = true
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			cur.WriteByte('$')
			i++
			have = true
		case in && c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
		case c == '"':
			in = !in
			have = true
		case !in && (c == ' ' || c == '\t'):
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}

// parsePlist reads a launchd agent plist with encoding/xml: the document must
// be well-formed and have Label, ProgramArguments (strings) and StartInterval.
func parsePlist(data []byte) (argv []string, env map[string]string, interval int, err error) {
	type value struct {
		XMLName xml.Name
		Text    string  `xml:",chardata"`
		Items   []value `xml:",any"`
	}
	var doc struct {
		XMLName xml.Name `xml:"plist"`
		Dict    value    `xml:"dict"`
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, 0, err
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, err
		}
		switch x := tok.(type) {
		case xml.Comment, xml.ProcInst:
		case xml.CharData:
			if len(bytes.TrimSpace(x)) == 0 {
				continue
			}
			return nil, nil, 0, fmt.Errorf("trailing content after </plist>")
		default:
			return nil, nil, 0, fmt.Errorf("trailing content after </plist>")
		}
	}
	items := doc.Dict.Items
	label := ""
	env = map[string]string{}
	for i := 0; i+1 < len(items); i += 2 {
		if items[i].XMLName.Local != "key" {
			return nil, nil, 0, fmt.Errorf("dict entry %d is <%s>, want <key>", i/2, items[i].XMLName.Local)
		}
		v := items[i+1]
		switch strings.TrimSpace(items[i].Text) {
		case "Label":
			label = strings.TrimSpace(v.Text)
		case "ProgramArguments":
			for _, s := range v.Items {
				if s.XMLName.Local != "string" {
					return nil, nil, 0, fmt.Errorf("ProgramArguments holds a <%s>", s.XMLName.Local)
				}
				argv = append(argv, s.Text)
			}
		case "StartInterval":
			if v.XMLName.Local != "integer" {
				return nil, nil, 0, fmt.Errorf("StartInterval is a <%s>, want <integer>", v.XMLName.Local)
			}
			if interval, err = strconv.Atoi(strings.TrimSpace(v.Text)); err != nil || interval <= 0 {
				return nil, nil, 0, fmt.Errorf("StartInterval %q is not a positive integer", v.Text)
			}
		case "EnvironmentVariables":
			for j := 0; j+1 < len(v.Items); j += 2 {
				env[strings.TrimSpace(v.Items[j].Text)] = v.Items[j+1].Text
			}
		}
	}
	switch {
	case label == "":
		err = fmt.Errorf("no Label")
	case len(argv) == 0:
		err = fmt.Errorf("no ProgramArguments")
	case interval == 0:
		err = fmt.Errorf("no StartInterval")
	}
	return argv, env, interval, err
}

func sortStrings(s []string) { sort.Strings(s) }
