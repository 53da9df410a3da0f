package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the table.
type row struct {
	Section string  `json:"section"`
	What    string  `json:"what"`
	N       int     `json:"n,omitempty"`
	Median  string  `json:"median"`
	P99     string  `json:"p99,omitempty"`
	Spread  string  `json:"spread,omitempty"` // min–max, for the figures with few samples (fleet)
	CPU     string  `json:"cpu,omitempty"`    // the measured process's own CPU time (user+sys), median
	Base    string  `json:"baseline,omitempty"`
	Ratio   string  `json:"ratio,omitempty"`
	Target  string  `json:"target,omitempty"`
	Met     string  `json:"met,omitempty"` // "met", "NOT met", "" (no target)
	MedMS   float64 `json:"median_ms,omitempty"`
	P99MS   float64 `json:"p99_ms,omitempty"`
}

// check is a correctness condition a measurement depends on.
type check struct {
	What   string `json:"what"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (b *bench) add(r row) { b.rows = append(b.rows, r) }

func (b *bench) check(what string, ok bool, format string, a ...any) {
	b.checks = append(b.checks, check{What: what, OK: ok, Detail: fmt.Sprintf(format, a...)})
	if !ok {
		b.logf("CHECK FAILED: %s: %s", what, fmt.Sprintf(format, a...))
	}
}

func (b *bench) checksFailed() bool {
	for _, c := range b.checks {
		if !c.OK {
			return true
		}
	}
	return false
}

// durs is a sample of durations.
type durs []time.Duration

func (d durs) sorted() durs {
	s := append(durs(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// pct is the nearest-rank percentile p (0 < p <= 100).
func (d durs) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := d.sorted()
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	if k < 0 {
		k = 0
	}
	return s[k]
}

func (d durs) median() time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := d.sorted()
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// fmtD prints a duration in ms with sensible precision.
func fmtD(d time.Duration) string {
	m := ms(d)
	switch {
	case m < 10:
		return fmt.Sprintf("%.2f ms", m)
	case m < 100:
		return fmt.Sprintf("%.1f ms", m)
	default:
		return fmt.Sprintf("%.0f ms", m)
	}
}

// timing adds a row for a sample of durations, with its target (a bound on
// the median) when given.
func (b *bench) timing(section, what string, d durs, target time.Duration, targetText string) row {
	r := row{Section: section, What: what, N: len(d), Median: fmtD(d.median()), P99: fmtD(d.pct(99)),
		MedMS: ms(d.median()), P99MS: ms(d.pct(99))}
	if targetText != "" {
		r.Target = targetText
		r.Met = metText(d.median() < target)
	}
	b.add(r)
	return r
}

// versus sets the baseline and the ratio (this / baseline, medians) of the
// last row; with factor > 0 the target is "at least factor times faster".
func (b *bench) versus(base durs, factor float64, targetText string) {
	r := &b.rows[len(b.rows)-1]
	ratio := r.MedMS / ms(base.median())
	r.Base = fmtD(base.median())
	r.Ratio = fmt.Sprintf("%.2f (%.1f× faster)", ratio, 1/ratio)
	if factor > 0 {
		r.Target = targetText
		r.Met = metText(ratio <= 1/factor)
	}
}

// withCPU sets the last row's CPU column from the processes' own CPU times.
func (b *bench) withCPU(cpu durs) {
	b.rows[len(b.rows)-1].CPU = fmtD(cpu.median())
}

func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// machine describes where the figures were taken.
func machine() string {
	model := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ":")
				model = strings.TrimSpace(model)
				break
			}
		}
	}
	kernel := ""
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(data))
	}
	tm := ""
	if out, err := exec.Command("tmux", "-V").Output(); err == nil {
		tm = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("%d cores (%s), Linux %s, %s, %s", runtime.NumCPU(), model, kernel, tm, runtime.Version())
}

func simText() string {
	var kv []string
	for _, k := range []string{"PANTTY_SIM_STARTUP", "PANTTY_SIM_COMMIT", "PANTTY_SIM_TURN"} {
		kv = append(kv, k+"="+simEnv[k])
	}
	return strings.Join(kv, " ") + "; paste_settle 50ms (the sim adapter's default)"
}

func (b *bench) printTable(w io.Writer) {
	form := "quick"
	if b.long {
		form = "long"
	}
	fmt.Fprintf(w, "\npantty performance — %s, %s form\nmachine: %s\nload average (1, 5, 15 min): %s at the start, %s at the end\nsimulator: %s\n\n",
		time.Now().Format("2006-01-02 15:04 MST"), form, machine(), b.load, loadAvg(), simText())
	spread := false
	for _, r := range b.rows {
		spread = spread || r.Spread != ""
	}
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	if spread {
		fmt.Fprintln(tw, "path\tfigure\tn\tmedian\tp99\tspread\tcpu\tbaseline\tratio\ttarget\t")
	} else {
		fmt.Fprintln(tw, "path\tfigure\tn\tmedian\tp99\tcpu\tbaseline\tratio\ttarget\t")
	}
	last := ""
	for _, r := range b.rows {
		sec := r.Section
		if sec == last {
			sec = ""
		}
		last = r.Section
		n := ""
		if r.N > 0 {
			n = fmt.Sprint(r.N)
		}
		target := r.Target
		if r.Met != "" {
			target += " — " + r.Met
		}
		p99 := r.P99
		if spread {
			p99 += "\t" + r.Spread
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", sec, r.What, n, r.Median, p99, r.CPU, r.Base, r.Ratio, target)
	}
	tw.Flush()
	if len(b.checks) > 0 {
		fmt.Fprintln(w, "\nchecks:")
		for _, c := range b.checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "  %s %s: %s\n", mark, c.What, c.Detail)
		}
	}
	if len(b.fails) > 0 {
		fmt.Fprintln(w, "\nsections that failed:")
		for _, f := range b.fails {
			fmt.Fprintf(w, "  - %s\n", f)
		}
	}
}

type jsonReport struct {
	At      time.Time `json:"at"`
	Long    bool      `json:"long"`
	Machine string    `json:"machine"`
	Load    [2]string `json:"load_average"` // 1, 5, 15 min: at the start, at the end
	Sim     string    `json:"simulator"`
	Rows    []row     `json:"rows"`
	Checks  []check   `json:"checks"`
	Fails   []string  `json:"failed_sections"`
}

func (b *bench) report() jsonReport {
	return jsonReport{At: time.Now().UTC(), Long: b.long, Machine: machine(), Load: [2]string{b.load, loadAvg()}, Sim: simText(), Rows: b.rows, Checks: b.checks, Fails: b.fails}
}
