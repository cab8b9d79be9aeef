// Package cliflags is the one flag grammar of the command-line tools,
// falkon-ooc and falkon-ooc-beam: the flags their fit and tune commands
// share are declared here, once, with one name, one help text and one
// syntax each, and turned into ooc's Config, TuneConfig and FitTunedConfig
// here, once. The way the go command's subcommands share
// cmd/go/internal/work's build flags.
//
// # Overview
//
// Flags holds the values. Flags.Add declares the shared flags of a
// command (Fit or Tune) on a flag.FlagSet; a program then declares its
// own (falkon-ooc: the Parquet/CSV input flags and --plot; falkon-ooc-beam:
// the runner's). After parsing, Flags.Config, Flags.TuneConfig and
// Flags.FitTunedConfig check the values and build the library's settings,
// returning a *UsageError that names the flag for a bad value. FlagErr
// maps an *ooc.ConfigError to the flag that sets its field.
//
// A σ or λ flag is a Grid: one number, a LIST (0.5,1,2) or a RANGE
// (LO:HI:COUNT, log spaced), the same in both programs. --sigma is the
// kernel's length scale (a grid to search in tune and fit --tune), and
// --sigmas is always the per-feature length scales of one kernel.
//
// Refuse hides a declared flag from the help and makes Refused report it,
// by name, when it is given: a program that cannot honour a shared flag
// keeps the grammar and says why.
//
// PrintDefaults writes a flag set's entries as the documentation writes
// them (--name), and FlagMessage rewords the flag package's parse errors
// the same way ("unknown flag --bogus (did you mean --bogs?)").
//
// # Concurrency
//
// A Flags value belongs to one command line; the functions keep no state.
//
// # Invariants
//
// The same command line gives the same settings in both programs: a flag
// declared by Add parses to the same field of Config, TuneConfig or
// FitTunedConfig whichever program declared it.
package cliflags
