package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/raytpu/raytpu/field"
)

// The command line's one rule, kept by every command:
//
//   - A bad flag value or argument is a usage error: exit 2 (ExitUsage),
//     and the message names the flag as the user typed it (--num-slices),
//     never a Go field. flagErrors turns a spec's field errors into that.
//   - Bad content of a file is exit 1 (ExitInvalid), with the field's path
//     in the file's own spelling (fileError).
//   - Every input is checked before anything is sent to a server, started
//     or captured.
//   - Every command that talks to a server ends by its --timeout (or the
//     documented default deadline), and on Ctrl-C: timed.
//   - Whatever user text reaches a terminal is escaped (terminalSafe), and
//     an error line is capped (capText).

// maxErrorLine caps one line of an error message: a value a user gave
// is echoed, never a 100 KB one.
const maxErrorLine = 1024

// maxArg caps a positional argument that names something short (a TPU
// generation, a topology, an id).
const maxArg = 256

// flagErrors turns the field errors of a value given by flags into a usage
// error that names the flags: a path whose first element is a key of flags
// is spelled from that flag ("numSlices" given by --num-slices is
// "--num-slices"). An error that holds no field error of those flags is
// returned as it is.
func flagErrors(err error, flags map[string]string) error {
	errs := field.Errors(err)
	if len(errs) == 0 {
		return err
	}
	var lines []string
	matched := false
	for _, e := range errs {
		root, rest := splitRoot(e.Field)
		line := e.Error()
		if flag, ok := flags[root]; ok {
			matched = true
			line = flag + rest + strings.TrimPrefix(line, e.Field)
		}
		lines = append(lines, line)
	}
	if !matched {
		return err
	}
	return usageError{errors.New(strings.Join(lines, "\n"))}
}

// splitRoot splits a field path into its first element and the rest
// ("spec[0].podType" is "spec" and "[0].podType").
func splitRoot(p string) (root, rest string) {
	if i := strings.IndexAny(p, ".["); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// checkArg refuses a positional argument longer than maxArg or holding a
// control character, naming the argument without echoing it in full.
func checkArg(name, v string) error {
	if len(v) > maxArg {
		return usagef("%s: a %d-byte argument, want at most %d bytes", name, len(v), maxArg)
	}
	if terminalSafe(v) != v {
		return usagef("%s %s: holds a control or non-printable character", name, strconv.Quote(v))
	}
	return nil
}

// terminalSafe returns s with every rune that is not printable (control
// characters such as BEL, ESC and NUL, invalid UTF-8) written as
// strconv.Quote writes it (\a, \x1b, \x00), so that text from a user, a
// file or a server cannot drive the terminal it is printed on. Printable
// text is returned as it is.
func terminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// capText cuts s to at most n bytes (on a rune boundary), saying how much
// was left out.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// defaultCallTimeout is the deadline of a command that sends requests to a
// server and waits for nothing but their answers (job list, serve status,
// top --once, ...) when --timeout is not given.
const defaultCallTimeout = time.Minute

// timed runs fn under ctx bounded by --timeout d (0: no limit) and says
// which ended it: the timeout ("gave up after --timeout 5s") or Ctrl-C
// ("interrupted"), instead of a bare "context deadline exceeded".
func timed(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	tctx, cancel := withTimeout(ctx, d)
	defer cancel()
	err := fn(tctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", err)
	case tctx.Err() != nil:
		return fmt.Errorf("gave up after --timeout %v: %w", d, err)
	}
	return err
}

// checkDashboardURL refuses a dashboard address that cannot be dialled as
// written (a port outside 1-65535, no host), before any request.
func checkDashboardURL(host string) error {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return nil // no port: the scheme's
	}
	if h == "" && port == "" {
		return errors.New("no host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	return nil
}

// checkDirFlag refuses a directory flag that names something else than a
// directory (a file, or a path through a file), before any work: a
// directory that does not exist yet is fine when create is true.
func checkDirFlag(flag, dir string, create bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return usagef("%s %s: not a directory", flag, strconv.Quote(dir))
	case err == nil:
		return nil
	case !create || !errors.Is(err, os.ErrNotExist):
		return usagef("%s %s: %v", flag, strconv.Quote(dir), unwrapPathError(err))
	}
	// Not there yet: its nearest existing ancestor must be a directory.
	for p := dir; ; {
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return usagef("%s %s: %s is not a directory", flag, strconv.Quote(dir), p)
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return usagef("%s %s: %v", flag, strconv.Quote(dir), unwrapPathError(err))
		}
	}
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
