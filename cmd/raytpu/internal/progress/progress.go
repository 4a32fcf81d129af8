// Package progress shows the progress of a long wait of the raytpu
// command (a cluster start, an upload, a job or a deployment): state
// transitions with the time spent in each, byte counts and ready counts.
//
// On a terminal (golang.org/x/term decides, or WithTerminal) a Printer
// keeps one status line at the bottom, rewritten in place with a carriage
// return and "erase to end of line" (ESC [K), and prints every finished
// state above it; Tick refreshes the elapsed time. Anywhere else every
// event is one plain line starting with an RFC 3339 UTC timestamp, and
// byte counts are printed at each quarter only, so logs stay short.
//
// Package progress imports nothing of the module.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Printer renders the progress of one wait. It is safe for concurrent use.
type Printer struct {
	w   io.Writer
	tty bool
	now func() time.Time

	mu         sync.Mutex
	start      time.Time
	state      string
	stateSince time.Time
	detail     string // bytes or counts shown after the state
	lastQuart  int    // plain mode: last quarter of a byte count printed
	lastCount  string // plain mode: last count printed
	statusLen  int    // a status line is on screen
}

// Option configures a Printer.
type Option func(*Printer)

// WithTerminal overrides the terminal detection.
func WithTerminal(on bool) Option { return func(p *Printer) { p.tty = on } }

// WithClock sets the clock. Default: time.Now.
func WithClock(now func() time.Time) Option { return func(p *Printer) { p.now = now } }

// New returns a Printer writing to w, in terminal mode when w is a
// terminal. The wait starts now.
func New(w io.Writer, opts ...Option) *Printer {
	p := &Printer{w: w, now: time.Now, lastQuart: -1}
	if f, ok := w.(*os.File); ok {
		p.tty = term.IsTerminal(int(f.Fd()))
	}
	for _, o := range opts {
		o(p)
	}
	p.start = p.now()
	p.stateSince = p.start
	return p
}

// Terminal reports whether the printer is in terminal mode.
func (p *Printer) Terminal() bool { return p.tty }

// Link prints a labelled URL (a dashboard page) on a line of its own.
func (p *Printer) Link(label, url string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(label + ": " + url)
}

// Line prints a message on a line of its own (on a terminal, above the
// status line).
func (p *Printer) Line(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(msg)
}

// State records a transition to state. The state left is printed with the
// time spent in it; a repeated state changes nothing.
func (p *Printer) State(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if state == p.state {
		return
	}
	now := p.now()
	prev, in := p.state, now.Sub(p.stateSince)
	p.state, p.stateSince, p.detail = state, now, ""
	p.lastQuart, p.lastCount = -1, ""
	if p.tty {
		if prev != "" {
			p.line(fmt.Sprintf("  %-12s %s", prev, dur(in)))
		}
		p.status()
		return
	}
	msg := state
	if prev != "" {
		msg += fmt.Sprintf(" (after %s in %s)", dur(in), prev)
	}
	p.line(msg)
}

// Bytes records what of total bytes are done (an upload).
func (p *Printer) Bytes(what string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pct := 100
	if total > 0 {
		pct = int(100 * done / total)
	}
	p.detail = fmt.Sprintf("%s %s/%s %d%%", what, mib(done), mib(total), pct)
	if p.tty {
		p.status()
		return
	}
	if q := pct / 25; q > p.lastQuart {
		p.lastQuart = q
		p.line(p.detail)
	}
}

// Count records n of want things ready (replicas, nodes).
func (p *Printer) Count(what string, n, want int) {
	p.Detail(fmt.Sprintf("%s %d/%d", what, n, want))
}

// Detail records what the current state shows after its name (several
// counts, say "LLM 1/2, Router 2/2"). On a terminal it is part of the
// status line; anywhere else it is printed when it changes.
func (p *Printer) Detail(detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.detail = detail
	if p.tty {
		p.status()
		return
	}
	if p.detail != p.lastCount {
		p.lastCount = p.detail
		p.line(p.detail)
	}
}

// Tick redraws the status line with the current elapsed times (terminal
// mode; nothing otherwise). Call it from the wait's poll loop.
func (p *Printer) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.state != "" {
		p.status()
	}
}

// Done ends the wait: the last state is printed with its time (on a
// terminal, unless it is msg itself), then msg with the total elapsed
// time, and the status line is gone.
func (p *Printer) Done(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	last, in := p.state, now.Sub(p.stateSince)
	p.state, p.detail = "", ""
	if p.tty {
		p.clearStatus()
		if last != "" && last != msg {
			p.line(fmt.Sprintf("  %-12s %s", last, dur(in)))
		}
	}
	p.line(fmt.Sprintf("%s in %s", msg, dur(now.Sub(p.start))))
}

// line prints a permanent line: on a terminal above the status line.
func (p *Printer) line(s string) {
	if !p.tty {
		fmt.Fprintf(p.w, "%s %s\n", p.now().UTC().Format(time.RFC3339), s)
		return
	}
	p.clearStatus()
	fmt.Fprintln(p.w, s)
	if p.state != "" {
		p.status()
	}
}

// status rewrites the status line: the state, its time, the detail and
// the total time.
func (p *Printer) status() {
	now := p.now()
	s := fmt.Sprintf("> %-12s %s", p.state, dur(now.Sub(p.stateSince)))
	if p.detail != "" {
		s += "  " + p.detail
	}
	s += "  (total " + dur(now.Sub(p.start)) + ")"
	fmt.Fprint(p.w, "\r\x1b[K"+s)
	p.statusLen = len(s)
}

func (p *Printer) clearStatus() {
	if p.statusLen > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.statusLen = 0
	}
}

// dur rounds to a tenth of a second.
func dur(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

func mib(n int64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
}
