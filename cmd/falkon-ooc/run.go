package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/falkon-ooc/falkon-ooc/internal/cliargs"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Exit codes, following the flag package and shell conventions.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// version is the program version, reported by "falkon-ooc version" and in
// every --json document.
var version = "0.1.0"

// command is one subcommand of falkon-ooc. Each command lives in its own
// file and registers itself in commands from an init function.
type command struct {
	Name  string // the word on the command line
	Short string // one line for the command list
	Usage string // the synopsis after "falkon-ooc NAME"
	Long  string // paragraphs printed by --help after the synopsis
	// Flags declares the command's flags on fs and returns the function
	// that runs it with the remaining arguments. The runner returns an
	// error to report (wrap usageError for exit code 2).
	Flags func(fs *flag.FlagSet) func(ctx context.Context, env *env, args []string) error
}

// env carries the standard streams into a command.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// stdin is what commands read for the input "-": os.Stdin, replaced by
// tests.
var stdin io.Reader = os.Stdin

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// usageError marks an error as a mistake on the command line (exit 2):
// the shared flags' own (cliflags) and the commands'.
type usageError = cliflags.UsageError

func usagef(format string, a ...any) error { return cliflags.Usagef(format, a...) }

// progName is the program's name in its messages and in the commands it
// prints: falkon-ooc, or the name it was run by (main sets it from
// os.Args[0] by programName).
var progName = "falkon-ooc"

// programName is the base name of arg0 (os.Args[0]) without ".exe", or
// "falkon-ooc" when it has none.
func programName(arg0 string) string {
	name := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "falkon-ooc"
	}
	return name
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printCommands(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(c, stdout)
				c.Flags(fs)
				fs.Usage()
				return exitOK
			}
			fmt.Fprintf(stderr, "%s: unknown command %q\n", progName, args[1])
			return exitUsage
		}
		printCommands(stdout)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "falkon-ooc %s\n", version)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", progName, name)
		printCommands(stderr)
		return exitUsage
	}
	fs := newFlagSet(c, stderr)
	runner := c.Flags(fs)
	cliflags.AddAliases(fs)
	usage := fs.Usage
	fs.Usage = func() {}     // flag would print it to stderr on --help too
	fs.SetOutput(io.Discard) // its messages are reported below, as usage errors
	args, err := cliargs.Permute(fs, args[1:])
	if err == nil {
		err = fs.Parse(args)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			usage()
			return exitOK
		}
		fmt.Fprintf(stderr, "%s %s: %s\n", progName, name, oneLine(cliflags.FlagMessage(err, fs)))
		fmt.Fprintf(stderr, "run '%s %s --help' for usage\n", progName, name)
		return exitUsage
	}
	err = runner(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr}, fs.Args())
	if err == nil {
		return exitOK
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s %s: %s\n", progName, name, oneLine(err.Error()))
		fmt.Fprintf(stderr, "run '%s %s --help' for usage\n", progName, name)
		return exitUsage
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s %s: interrupted\n", progName, name)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "%s %s: %s\n", progName, name, oneLine(err.Error()))
		return exitFailure
	}
}

// oneLine keeps an error on one line whatever the names in it hold: a
// control character (a newline in a file name) or a byte that is not
// UTF-8 is written as %q writes it (\n, \x1b, \xff); the rest is left as
// it is, so ordinary names read as typed.
func oneLine(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if (r == utf8.RuneError && n <= 1) || unicode.IsControl(r) {
			q := strconv.Quote(s[:n])
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func newFlagSet(c *command, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: falkon-ooc %s %s\n\n", c.Name, c.Usage)
		if c.Long != "" {
			fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(c.Long))
		}
		fmt.Fprintln(w, cliflags.FlagsHeading)
		cliflags.PrintDefaults(fs)
	}
	return fs
}

func printCommands(w io.Writer) {
	fmt.Fprintf(w, "falkon-ooc: FALKON kernel ridge regression on data larger than RAM\n\n")
	fmt.Fprintf(w, "usage: falkon-ooc COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Short)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "version", "print the version")
	fmt.Fprintf(w, "\nrun 'falkon-ooc COMMAND --help' for a command's flags\n")
}
