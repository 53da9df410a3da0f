package recover

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// ---- rendering (the same text as the templates in scripts/) ----

func (o InstallOptions) intervalArg() string { return o.Interval.String() }

func cronSchedule(d time.Duration) (string, error) {
	if d < time.Minute || d%time.Minute != 0 || d > time.Hour {
		return "", fmt.Errorf("%w: cron runs on whole minutes: --interval %s must be 1m..60m", state.ErrBadInput, d)
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
		return "", fmt.Errorf("%w: a path with a newline cannot go in a crontab line", state.ErrBadInput)
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
	<key>AbandonProcessGroup</key>
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
# The drivers and tmux servers a sweep revives must outlive it: with the
# default KillMode=control-group systemd kills every process left in the
# service's cgroup when the sweep exits. (A user timer runs after logout only
# with 'loginctl enable-linger'.)
KillMode=process
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
	return "", fmt.Errorf("%w: unknown scheduler %q", state.ErrBadInput, o.Kind)
}
