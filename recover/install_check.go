package recover

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// ---- check ----

// CheckResult is one installed entry's check.
type CheckResult struct {
	Kind     string   `json:"kind"`
	OK       bool     `json:"ok"`
	Passed   []string `json:"passed"`
	Problems []string `json:"problems"`
	// Pending is set when no sweep has run yet but the entry was installed
	// less than two intervals ago: nothing is wrong yet, the first run is due.
	Pending string `json:"pending,omitempty"`
}

// Check asserts that every recorded entry is installed and loadable: it is
// present where the scheduler reads it; its unit or plist passes the platform's
// own linter where one exists (systemd-analyze verify, plutil -lint) or an XML
// parse; its exact command runs in the scheduler's minimal environment with
// --dry-run and produces a sweep report; and the last real sweep is younger
// than two intervals (before the first one, within two intervals of the
// install, the result is Pending, not a problem). Any failure is a problem
// named in the result.
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
				pass("the entry's command ran in the scheduler's environment with --dry-run and printed a sweep report; every seat meant to run is launchable there (launch-env.toml complete, binary on its recorded PATH)")
			}
		}
		last, err := state.ReadLastSweep(home)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !e.InstalledAt.IsZero() && now.Sub(e.InstalledAt) <= 2*e.Interval.Duration:
			r.Pending = fmt.Sprintf("installed %s ago; no sweep has run yet: the first is due within %s (run 'pantty recover check' again after it)",
				shortDur(now.Sub(e.InstalledAt)), e.Interval.Duration)
		case errors.Is(err, fs.ErrNotExist):
			fail("no sweep has run yet (no %s): the scheduler has not run the entry", state.LastSweepPath(home))
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
	var launch []string
	for _, sr := range rep.Seats {
		launch = append(launch, sr.Launch...)
	}
	if len(launch) > 0 {
		return "in the scheduler's environment a seat meant to run cannot be launched: " + strings.Join(launch, "; ")
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
				return nil, nil, fmt.Errorf("the ExecStart= line: %v", err)
			}
			argv = w
		case "Environment":
			w, err := sdWords(v)
			if err != nil {
				return nil, nil, fmt.Errorf("the Environment= line: %v", err)
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
