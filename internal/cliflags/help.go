package cliflags

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// FlagsHeading is the line that introduces the flags in a command's help.
const FlagsHeading = "flags (before or after the arguments; -- ends them):"

// hidden marks a flag that the help leaves out: another spelling of a
// flag documented under its own name (AddAliases), or one the program
// refuses (Refuse).
const hidden = "\x00hidden"

// refusal marks a refused flag; the reason follows it.
const refusal = "\x00refused:"

// AddAliases defines the British spelling of every flag whose name says
// "center" (--centres, --tune-centres, --centres-sampling), the spelling
// the documentation's prose uses, as the same flag.
func AddAliases(fs *flag.FlagSet) {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Name, "center") {
			names = append(names, f.Name)
		}
	})
	for _, name := range names {
		alias := strings.ReplaceAll(name, "center", "centre")
		if fs.Lookup(alias) == nil {
			fs.Var(fs.Lookup(name).Value, alias, hidden)
		}
	}
}

// Refuse marks the flags names as ones the program cannot honour,
// declaring as a flag with a value each that fs does not define yet (the
// other program's own, such as falkon-ooc's --plot): they parse, the help
// leaves them out, and Refused reports them, when given, with reason.
func Refuse(fs *flag.FlagSet, reason string, names ...string) {
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			fs.String(name, "", "")
			f = fs.Lookup(name)
		}
		f.Usage = refusal + reason
	}
}

// Refused returns a *UsageError for the first given flag (in order of
// name) that Refuse marked: "--NAME: REASON".
func Refused(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if reason, ok := strings.CutPrefix(f.Usage, refusal); ok && err == nil {
			err = Usagef("--%s: %s", f.Name, reason)
		}
	})
	return err
}

func shown(f *flag.Flag) bool { return f.Usage != hidden && !strings.HasPrefix(f.Usage, refusal) }

// PrintDefaults is flag.PrintDefaults with the flags written as the
// documentation writes them, --name, one default per flag (a usage that
// states its own "(default …)" gets no second one), and neither aliases
// nor refused flags.
func PrintDefaults(fs *flag.FlagSet) {
	w := fs.Output()
	fs.VisitAll(func(f *flag.Flag) {
		if !shown(f) {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		switch {
		case f.DefValue == "" || f.DefValue == "0" || f.DefValue == "false":
		case strings.Contains(usage, "(default "):
		case fmt.Sprintf("%T", f.Value) == "*flag.stringValue":
			line += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			line += fmt.Sprintf(" (default %v)", f.DefValue)
		}
		fmt.Fprintln(w, line)
	})
}

// FlagMessage rewords the flag package's parse errors as the
// documentation writes flags: "unknown flag --bogus" (with the nearest
// flag, if one is near) rather than "flag provided but not defined:
// -bogus".
func FlagMessage(err error, fs *flag.FlagSet) string {
	s := err.Error()
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: -"); ok {
		if near := SuggestFlag(fs, strings.TrimPrefix(name, "-")); near != "" {
			return "unknown flag --" + name + " (did you mean --" + near + "?)"
		}
		return "unknown flag --" + name
	}
	if name, ok := strings.CutPrefix(s, "flag needs an argument: -"); ok {
		return "flag --" + name + " needs a value"
	}
	s = strings.Replace(s, "for flag -", "for -", 1)
	return strings.Replace(s, "for -", "for flag --", 1)
}

// SuggestFlag returns the flag of fs nearest to name (an edit distance of
// at most 2, or name a prefix of it), or "". Aliases and refused flags
// are not suggested.
func SuggestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if shown(f) {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	for _, n := range names {
		d := editDistance(name, n)
		if len(name) >= 3 && strings.HasPrefix(n, name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
