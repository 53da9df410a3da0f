package sim

import (
	"io"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// Screen texts pantty and its tests look for.
const (
	busyTurn     = "✻ Simulating… (esc to interrupt)"
	busyCompact  = "✻ Compacting conversation… (esc to interrupt)"
	placeholder  = "Resend your message to try again"
	maxBoxLines  = 8
	dim, undim   = "\x1b[2m", "\x1b[22m"
	clearToEOL   = "\x1b[K"
	clearToEOS   = "\x1b[J"
	cursorToHome = "\x1b[H"
)

// render redraws the whole screen from the top. It overwrites lines and
// erases what is left instead of clearing the screen, so tmux does not push
// every frame into the pane's history.
func (u *tui) render() {
	w, h := 80, 24
	if u.sizeFd >= 0 {
		if cw, ch, err := term.GetSize(u.sizeFd); err == nil && cw > 0 && ch > 0 {
			w, h = cw, ch
		}
	}
	var lines []string
	if u.rewind {
		lines = []string{
			"Rewind",
			"",
			"Restore the code and/or conversation to the point before…",
			"❯ (current)",
			"",
			"Enter to continue · Esc to exit",
		}
	} else {
		lines = u.mainScreen(w, h)
	}
	var b strings.Builder
	b.WriteString(cursorToHome)
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString(l)
		b.WriteString(clearToEOL)
	}
	b.WriteString(clearToEOS)
	io.WriteString(u.out, b.String())
}

func (u *tui) mainScreen(w, h int) []string {
	head := []string{
		fit("✻ pantty sim · Claude Code test double · "+u.e.cfg.model, w),
		fit("  session "+u.e.sessionID+" · "+u.e.cfg.cwd, w),
		"",
	}
	if !u.ready {
		return append(head, "  Starting…")
	}
	var box []string
	if shown := u.shownBox(); shown == "" && u.placeholder {
		box = []string{"> " + dim + placeholder + undim}
	} else {
		box = boxLines(shown, w)
	}
	status := ""
	switch {
	case u.busy != nil && u.busy.compact != nil:
		status = busyCompact
	case u.busy != nil:
		status = busyTurn
	case u.notice != "":
		status = u.notice
	}
	tail := []string{fit(status, w), rule(w)}
	tail = append(tail, box...)
	tail = append(tail, rule(w), fit("  "+u.footer, w))
	if u.dialog {
		tail = u.dialogLines(w)
	}
	room := h - len(head) - len(tail)
	conv := u.scroll
	if room < 0 {
		room = 0
	}
	if len(conv) > room {
		conv = conv[len(conv)-room:]
	}
	out := append([]string{}, head...)
	for _, l := range conv {
		out = append(out, fit(l, w))
	}
	return append(out, tail...)
}

// hiddenLines starts the box's first line when the text is taller than the
// box: the count of lines scrolled out of sight above.
const hiddenLines = "  … "

// boxLines shows the input box: "> " before the first line, two spaces
// before the others, long lines wrapped, at most maxBoxLines shown (the
// last ones, under a count of the hidden ones).
func boxLines(box string, w int) []string {
	var out []string
	for i, l := range strings.Split(box, "\n") {
		prefix := "  "
		if i == 0 {
			prefix = "> "
		}
		r := []rune(l)
		width := w - 3
		if width < 1 {
			width = 1
		}
		for {
			n := min(len(r), width)
			out = append(out, prefix+string(r[:n]))
			r = r[n:]
			prefix = "  "
			if len(r) == 0 {
				break
			}
		}
	}
	if len(out) > maxBoxLines {
		hidden := len(out) - maxBoxLines + 1
		out = append([]string{hiddenLines + strconv.Itoa(hidden) + " more lines"}, out[len(out)-maxBoxLines+1:]...)
	}
	return out
}

// fit cuts a line to the screen width so nothing wraps and the layout
// keeps its height.
func fit(s string, w int) string {
	r := []rune(s)
	if len(r) >= w {
		return string(r[:max(w-1, 0)])
	}
	return s
}
