package recover_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/seattest"
)

// templateHeaders are the comments above the hand-install templates in scripts/.
var templateHeaders = map[string]string{
	"pantty-recover.cron": `# pantty recover, every minute, from cron. Install by hand with 'crontab -e', or
# let 'pantty recover install --cron' add (and 'uninstall' remove) this line.
# Replace @PANTTY@ with the absolute path of the pantty binary and @PANTTY_HOME@
# with the absolute state root; quote them as shown, and write a % as \%.
`,
	"pantty-recover.service": `# pantty recover: one sweep (systemd user service, run by pantty-recover.timer).
# Copy with pantty-recover.timer to ~/.config/systemd/user/, replace @PANTTY@ and
# @PANTTY_HOME@ (absolute paths), then: systemctl --user enable --now pantty-recover.timer
# ('pantty recover install --systemd' does all of it; 'pantty recover check' asserts it runs.)
`,
	"pantty-recover.timer": `# Runs pantty-recover.service every minute (OnUnitActiveSec).
`,
}

// The hand-install templates in scripts/ are exactly what install writes, with
// @PANTTY@ and @PANTTY_HOME@ for the paths. PANTTY_UPDATE_TEMPLATES=1 rewrites them.
func TestScriptsTemplatesMatchInstall(t *testing.T) {
	o := recover.InstallOptions{Home: "@PANTTY_HOME@", Pantty: "@PANTTY@", Interval: time.Minute}
	cron, err := recover.CronLine(o)
	if err != nil {
		t.Fatal(err)
	}
	svc, timer := recover.SystemdUnits(o)
	want := map[string]string{
		"pantty-recover.cron":    cron + "\n",
		"pantty-recover.plist":   recover.LaunchdPlist(o),
		"pantty-recover.service": svc,
		"pantty-recover.timer":   timer,
	}
	for name, body := range want {
		text := body
		if h := templateHeaders[name]; h != "" {
			text = h + "\n" + body
		}
		path := filepath.Join("..", "scripts", name)
		if os.Getenv("PANTTY_UPDATE_TEMPLATES") == "1" {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (PANTTY_UPDATE_TEMPLATES=1 writes it)", err)
		}
		if string(got) != text {
			t.Errorf("scripts/%s differs from what install writes:\n--- file\n%s\n--- install\n%s", name, got, text)
		}
	}
}

// installEnv points every scheduler program and directory at the test's own.
type installEnv struct {
	env      map[string]string
	crontab  string // the fake crontab's storage
	ctlLog   string // what the fake systemctl/launchctl were asked
	unitDir  string
	agentDir string
}

func newInstallEnv(t *testing.T) installEnv {
	dir := t.TempDir()
	e := installEnv{crontab: filepath.Join(dir, "crontab.txt"), ctlLog: filepath.Join(dir, "ctl.log"),
		unitDir: filepath.Join(dir, "systemd"), agentDir: filepath.Join(dir, "LaunchAgents")}
	crontab := writeScript(t, "fake-crontab", fmt.Sprintf(`f=%s
case "$1" in
-l) if [ -f "$f" ]; then cat "$f"; else echo "no crontab for $(id -un)" >&2; exit 1; fi ;;
-) cat > "$f" ;;
*) echo "fake crontab: unexpected $*" >&2; exit 2 ;;
esac
`, e.crontab))
	ctl := writeScript(t, "fake-ctl", fmt.Sprintf("echo \"$*\" >> %s\n", e.ctlLog))
	e.env = map[string]string{recover.CrontabEnv: crontab, recover.SystemdDirEnv: e.unitDir, recover.LaunchdDirEnv: e.agentDir,
		recover.SystemctlEnv: ctl, recover.LaunchctlEnv: ctl}
	return e
}

func read(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// cron: install adds exactly one line (keeping the person's own), idempotently;
// check fails until a sweep has run, then passes by running the line's exact
// command in cron's minimal environment with --dry-run; a broken line fails
// check; uninstall removes only our line. The real crontab is never touched.
func TestInstallCheckUninstallCron(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "cron")
	e := newInstallEnv(t)
	run := func(args ...string) seattest.Result { return h.RunEnv(e.env, "", args...) }
	if r := run("recover", "install", "--cron", "--print"); r.Code != 0 || !strings.Contains(r.Stdout, "recover --interval 1m0s") || read(t, e.crontab) != "" {
		t.Fatalf("--print: %s (crontab %q)", r, read(t, e.crontab))
	}
	os.WriteFile(e.crontab, []byte("MAILTO=someone\n17 3 * * * /usr/bin/backup\n"), 0o600)
	for i := 0; i < 2; i++ {
		if r := run("recover", "install", "--cron"); r.Code != 0 {
			t.Fatalf("install: %s", r)
		}
	}
	tab := read(t, e.crontab)
	if strings.Count(tab, "# pantty-recover "+h.Home) != 1 || !strings.Contains(tab, "/usr/bin/backup") ||
		!strings.Contains(tab, "PANTTY_HOME='"+h.Home+"' '"+h.Bin+"' recover") {
		t.Fatalf("crontab after two installs:\n%s", tab)
	}
	// Right after install, before the scheduler's first run: pending, not a failure.
	if r := run("recover", "check"); r.Code != 0 || !strings.Contains(r.Stdout, "cron: pending: installed") || strings.Contains(r.Stdout, "FAILED") {
		t.Fatalf("check right after install: want exit 0 and pending; got %s", r)
	}
	// Two intervals after the install with still no sweep: the scheduler is not running it.
	rec := filepath.Join(h.Home, "recover-install.toml")
	old := read(t, rec)
	aged := regexp.MustCompile(`installed_at = \S+`).ReplaceAllString(old, "installed_at = 2000-01-01T00:00:00Z")
	if aged == old {
		t.Fatalf("no installed_at in %s:\n%s", rec, old)
	}
	os.WriteFile(rec, []byte(aged), 0o600)
	if r := run("recover", "check"); r.Code != 1 || !strings.Contains(r.Stderr, "no sweep has run yet") {
		t.Fatalf("check two intervals after install with no sweep: %s", r)
	}
	if r := run("recover"); r.Code != 0 {
		t.Fatalf("sweep: %s", r)
	}
	r := run("recover", "check", "--json")
	var res []recover.CheckResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || len(res) != 1 || !res[0].OK {
		t.Fatalf("check after a sweep: %s", r)
	}
	if !strings.Contains(strings.Join(res[0].Passed, "\n"), "scheduler's environment") {
		t.Fatalf("check did not run the entry: %+v", res[0])
	}
	// A line whose binary does not exist is not loadable.
	os.WriteFile(e.crontab, []byte(strings.ReplaceAll(tab, h.Bin, h.Bin+"-gone")), 0o600)
	if r := run("recover", "check"); r.Code != 1 || !strings.Contains(r.Stderr, "does not run in the scheduler's environment") {
		t.Fatalf("check of a broken line: %s", r)
	}
	if r := run("recover", "uninstall"); r.Code != 0 {
		t.Fatalf("uninstall: %s", r)
	}
	if tab := read(t, e.crontab); strings.Contains(tab, "pantty-recover") || !strings.Contains(tab, "/usr/bin/backup") || !strings.Contains(tab, "MAILTO") {
		t.Fatalf("crontab after uninstall:\n%s", tab)
	}
	if r := run("recover", "check"); r.Code != 1 || !strings.Contains(r.Stderr, "not installed") {
		t.Fatalf("check after uninstall: %s", r)
	}
}

// systemd: the user service and timer go to the (test's) unit directory and
// are enabled through the (test's) systemctl; check runs systemd-analyze
// verify where it exists and the ExecStart in the manager's environment, and
// fails for a unit whose binary is gone; uninstall disables and removes them.
func TestInstallCheckUninstallSystemd(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "sysd")
	e := newInstallEnv(t)
	run := func(args ...string) seattest.Result { return h.RunEnv(e.env, "", args...) }
	if r := run("recover", "install", "--systemd"); r.Code != 0 {
		t.Fatalf("install: %s", r)
	}
	svc := filepath.Join(e.unitDir, "pantty-recover.service")
	if text := read(t, svc); !strings.Contains(text, "ExecStart="+h.Bin+" recover --interval 1m0s") || !strings.Contains(text, "PANTTY_HOME="+h.Home) {
		t.Fatalf("service:\n%s", text)
	}
	if log := read(t, e.ctlLog); !strings.Contains(log, "--user daemon-reload") || !strings.Contains(log, "--user enable --now pantty-recover.timer") {
		t.Fatalf("systemctl was asked: %q", log)
	}
	if r := run("recover"); r.Code != 0 {
		t.Fatalf("sweep: %s", r)
	}
	if r := run("recover", "check"); r.Code != 0 {
		t.Fatalf("check: %s", r)
	}
	good := read(t, svc)
	os.WriteFile(svc, []byte(strings.ReplaceAll(good, "ExecStart="+h.Bin, "ExecStart="+h.Bin+"-gone")), 0o644)
	if r := run("recover", "check"); r.Code != 1 || !strings.Contains(r.Stdout, "problem") {
		t.Fatalf("check of a unit whose binary is gone: %s", r)
	}
	if r := run("recover", "uninstall", "--systemd"); r.Code != 0 {
		t.Fatalf("uninstall: %s", r)
	}
	if _, err := os.Stat(svc); !os.IsNotExist(err) {
		t.Fatalf("the service is still there (%v)", err)
	}
	if log := read(t, e.ctlLog); !strings.Contains(log, "--user disable --now pantty-recover.timer") {
		t.Fatalf("systemctl was not asked to disable: %q", log)
	}
}

// launchd: the agent plist (StartInterval) is written; without plutil check
// lints it as XML and runs its ProgramArguments in launchd's environment; a
// plist that does not parse fails check.
func TestInstallCheckUninstallLaunchd(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "agent")
	e := newInstallEnv(t)
	run := func(args ...string) seattest.Result { return h.RunEnv(e.env, "", args...) }
	if r := run("recover", "install", "--launchd", "--interval", "2m"); r.Code != 0 {
		t.Fatalf("install: %s", r)
	}
	plist := filepath.Join(e.agentDir, "dev.pantty.recover.plist")
	if text := read(t, plist); !strings.Contains(text, "<integer>120</integer>") || !strings.Contains(text, "<string>"+h.Bin+"</string>") {
		t.Fatalf("plist:\n%s", text)
	}
	if log := read(t, e.ctlLog); !strings.Contains(log, "load -w "+plist) {
		t.Fatalf("launchctl was asked: %q", log)
	}
	if r := run("recover", "--interval", "2m"); r.Code != 0 {
		t.Fatalf("sweep: %s", r)
	}
	if r := run("recover", "check"); r.Code != 0 || !strings.Contains(r.Stdout, "StartInterval 120s") {
		t.Fatalf("check: %s", r)
	}
	good := read(t, plist)
	os.WriteFile(plist, []byte(good[:len(good)/2]), 0o644)
	if r := run("recover", "check"); r.Code != 1 || !strings.Contains(r.Stdout, "does not parse") {
		t.Fatalf("check of a truncated plist: %s", r)
	}
	if r := run("recover", "uninstall"); r.Code != 0 {
		t.Fatalf("uninstall: %s", r)
	}
	if _, err := os.Stat(plist); !os.IsNotExist(err) {
		t.Fatalf("the plist is still there (%v)", err)
	}
}

func TestInstallRefusesBadInput(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "badinst")
	e := newInstallEnv(t)
	for _, args := range [][]string{
		{"recover", "install"},
		{"recover", "install", "--cron", "--systemd"},
		{"recover", "install", "--cron", "--interval", "30s"},
		{"recover", "extra"},
	} {
		if r := h.RunEnv(e.env, "", args...); r.Code != 2 {
			t.Errorf("pantty %v: want exit 2, got %s", args, r)
		}
	}
	if read(t, e.crontab) != "" {
		t.Fatal("a refused install touched the crontab")
	}
}

// A sweep steers every seat (it kills and starts drivers): a seat's own model
// may not run one; a dry run only reads.
func TestRecoverRefusedInsideASeat(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "inside")
	in := map[string]string{"PANTTY_SEAT": "inside"}
	if r := h.RunEnv(in, "", "recover"); r.Code != 2 || !strings.Contains(r.Stderr, "inside seat") {
		t.Fatalf("recover from inside a seat: %s", r)
	}
	if r := h.RunEnv(in, "", "recover", "--dry-run"); r.Code != 0 {
		t.Fatalf("a dry run from inside a seat: %s", r)
	}
}

// check proves launchability in the scheduler's own environment: a seat meant
// to run whose launch-env.toml lacks a pass_env value (seat.toml gained it
// after the start: a start without it is refused) makes check fail naming the
// seat and the variable; started again with --refresh-env from a shell that
// has it, check passes.
func TestCheckNamesASeatThatCannotLaunchUnderCron(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "keyed")
	e := newInstallEnv(t)
	run := func(extra map[string]string, args ...string) seattest.Result {
		env := map[string]string{}
		for k, v := range e.env {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return h.RunEnv(env, "", args...)
	}
	if r := run(nil, "seat", "start", h.Name); r.Code != 0 {
		t.Fatalf("seat start: %s", r)
	}
	cfg, err := os.ReadFile(h.Seat().ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	h.WriteConfig("pass_env = [\"PANTTY_TEST_KEY\"]\n" + string(cfg))
	if r := run(nil, "recover", "install", "--cron"); r.Code != 0 || !strings.Contains(r.Stdout, "PATH=/usr/bin:/bin") {
		t.Fatalf("install: %s", r)
	}
	if r := run(nil, "recover"); r.Code != 0 {
		t.Fatalf("sweep: %s", r)
	}
	r := run(nil, "recover", "check")
	if r.Code != 1 || !strings.Contains(r.Stderr, "seat keyed: pass_env PANTTY_TEST_KEY missing from launch-env.toml") {
		t.Fatalf("check with a seat lacking its key: want exit 1 naming it, got %s", r)
	}
	if r := run(map[string]string{"PANTTY_TEST_KEY": "k1"}, "seat", "start", h.Name, "--refresh-env"); r.Code != 0 || !strings.Contains(r.Stdout, "for its next launch") {
		// The live driver keeps the seat: the record is refreshed for its next launch.
		t.Fatalf("seat start --refresh-env on a running seat: %s", r)
	}
	rec, err := h.Seat().LaunchEnvFile().Read()
	if err != nil || rec.Vars["PANTTY_TEST_KEY"] != "k1" || rec.By != "seat start --refresh-env" {
		t.Fatalf("launch-env.toml after --refresh-env: %+v (%v)", rec, err)
	}
	if r := run(nil, "recover", "check"); r.Code != 0 {
		t.Fatalf("check after the key was recorded: %s", r)
	}
}
