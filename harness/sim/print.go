package sim

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// resultEnvelope is Claude's `-p --output-format json` result object.
type resultEnvelope struct {
	Type              string   `json:"type"`
	Subtype           string   `json:"subtype"`
	IsError           bool     `json:"is_error"`
	DurationMs        int64    `json:"duration_ms"`
	DurationAPIMs     int64    `json:"duration_api_ms"`
	NumTurns          int      `json:"num_turns"`
	Result            string   `json:"result"`
	SessionID         string   `json:"session_id"`
	TotalCostUSD      float64  `json:"total_cost_usd"`
	Usage             usage    `json:"usage"`
	PermissionDenials []string `json:"permission_denials"`
}

// runPrint is `-p`: one prompt, one turn, the same hooks, logs and markers
// as the TUI, and a result on stdout. A dispatched input (leading sigil)
// "succeeds" with zero turns: the hazard pantty must detect.
func runPrint(e *engine, stdin io.Reader, stdout, stderr io.Writer) int {
	start := time.Now()
	prompt := e.cfg.prompt
	if prompt == "" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "Error: reading stdin: %v\n", err)
			return 1
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "Error: Input must be provided either through stdin or as a prompt argument when using --print")
		return 1
	}
	var lines []string
	e.say = func(l string) { lines = append(lines, l) }
	env := resultEnvelope{Type: "result", Subtype: "success", PermissionDenials: []string{}}
	e.sessionStartHook(e.startSource())

	if e.isDispatch(prompt) {
		res := e.dispatch(prompt)
		if res.compact != nil {
			time.Sleep(e.cfg.turn)
			e.finishCompact(res.compact)
		}
		env.Result = strings.Join(res.lines, "\n")
	} else if promptID, hr := e.userPromptSubmit(prompt); hr.blocked {
		env.Subtype, env.IsError = "error_during_execution", true
		env.Result = "UserPromptSubmit operation blocked by hook: " + hr.stderr
	} else {
		t := e.beginTurn(prompt, promptID, hr.stdout)
		switch {
		case t.crash:
			time.Sleep(t.duration(e.cfg.turn) / 2)
			fmt.Fprintln(stderr, "sim: [sim:crash] marker: exiting mid-turn")
			return 3
		case t.hang:
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
			<-sigs
			e.interruptTurn(t)
			return 130
		}
		time.Sleep(t.duration(e.cfg.turn))
		env.DurationAPIMs = time.Since(start).Milliseconds()
		if t.failure != nil {
			e.failTurn(t)
			env.Subtype, env.IsError, env.Result = "error_during_execution", true, t.failure.message
		} else {
			e.completeTurn(t)
			env.NumTurns, env.Result = 1, t.reply
			env.Usage = e.st.Last
		}
	}
	e.sessionEndHook("other")
	env.SessionID = e.sessionID
	env.TotalCostUSD = e.st.CostUSD
	env.DurationMs = time.Since(start).Milliseconds()
	if e.cfg.outputFormat == "json" {
		b, _ := marshal(env)
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintln(stdout, env.Result)
	}
	if env.IsError {
		return 1
	}
	return 0
}
