// Package cli implements the raytpu command over the public packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitInvalid = 1 // an invalid spec or a failed operation
	ExitUsage   = 2 // bad flags or arguments
)

// usageError marks errors in how the command was called.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// Main runs the command line args and returns the exit status. It never
// panics on user input and prints one clear message on stderr on failure.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "raytpu: internal error: %v\n", r)
			code = ExitInvalid
		}
	}()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		printError(stderr, "", err.Error())
		fmt.Fprintln(stderr, "Run 'raytpu --help' for usage.")
		return ExitUsage
	}
	if errs := field.Errors(err); len(errs) > 0 {
		// One line per problem; a problem in a file names the file and
		// the kind of file expected.
		prefix := ""
		var ke *fieldfile.KindError
		if errors.As(err, &ke) {
			prefix = fmt.Sprintf("not a valid %s: ", ke.Want)
			if ke.File != "" {
				prefix = ke.File + ": " + prefix
			}
		}
		for _, e := range errs {
			printError(stderr, prefix, e.Error())
		}
		return ExitInvalid
	}
	printError(stderr, "", err.Error())
	return ExitInvalid
}

// printError prints an error's message on stderr, each line after
// "raytpu: ", escaped (terminalSafe) and capped (capText): whatever a user
// typed or a file or server holds reaches the terminal as text.
func printError(stderr io.Writer, prefix, msg string) {
	for line := range strings.SplitSeq(msg, "\n") {
		fmt.Fprintf(stderr, "raytpu: %s%s\n", prefix, terminalSafe(capText(line, maxErrorLine)))
	}
}

// isCobraUsage recognises cobra's own argument and flag errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires exactly", "required flag", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "raytpu",
		Short:         "Plan and run Ray workloads on TPUs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCatalogCmd(), newSliceCmd(), newPlanCmd(), newServeCmd(), newJobCmd(), newDevClusterCmd(), newDataCmd())
	root.AddCommand(newTopCmd(), newProfileCmd())
	root.AddCommand(newRenderCmd(), newApplyCmd())
	requireSubcommands(root)
	return root
}

// requireSubcommands makes every command that only groups others (raytpu,
// raytpu job, raytpu serve, ...) refuse an unknown or a missing
// subcommand with a usage error (exit 2) instead of printing its help and
// exiting 0.
func requireSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if len(args) == 0 {
			return usagef("%s needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
		}
		msg := fmt.Sprintf("unknown command %q for %q (valid: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		if s := field.Nearest(args[0], names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return usageError{errors.New(msg)}
	}
}

// output is the -o flag.
type output struct {
	value   string
	allowed []string
}

func addOutput(cmd *cobra.Command, o *output, allowed ...string) {
	o.allowed = allowed
	cmd.Flags().StringVarP(&o.value, "output", "o", allowed[0], "output format: "+strings.Join(allowed, "|"))
}

func (o *output) check() error {
	if !slices.Contains(o.allowed, o.value) {
		msg := fmt.Sprintf("--output %q is not supported (valid: %s)", o.value, strings.Join(o.allowed, ", "))
		if s := field.Nearest(o.value, o.allowed); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return usageError{errors.New(msg)}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// exactArgs is cobra.ExactArgs with a usage error naming the arguments.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("want %d arguments (%s), got %d", len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// readFile reads a file a user names, up to one byte past
// fieldfile.MaxFileSize (the loader refuses a larger one). Anything but a
// regular file (a FIFO, a device, a directory) is refused before it is
// opened: reading one could block forever or never end.
func readFile(path string) ([]byte, error) {
	if err := checkRegularFile(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, fieldfile.MaxFileSize+1))
}

// checkRegularFile refuses a path that is not a regular file (a FIFO, a
// device, a directory) before anything opens it.
func checkRegularFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	return nil
}

// checkTimeout refuses a negative --timeout as a usage error, the same on
// every command: 0 means no limit.
func checkTimeout(flag string, d time.Duration) error {
	if d < 0 {
		return usagef("--%s %v: want a positive duration, or 0 for no limit", flag, d)
	}
	return nil
}

// withTimeout bounds ctx by d; 0 is no limit.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}
