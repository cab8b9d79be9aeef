package main

import "github.com/falkon-ooc/falkon-ooc/internal/cliflags"

// The map of ooc's configuration fields to flags, and the rendering of
// ooc's errors and notes with it, are cliflags's: the same in
// falkon-ooc-beam.

// flagErr renders an error of ooc for the command line: an
// *ooc.ConfigError about a value a flag sets is a usage error (exit 2)
// naming the flag, "--lambda: lambda must be > 0, got -1"; in any other
// the fields its text names become the flags that set them.
func flagErr(err error) error { return cliflags.FlagErr(err) }

// flagNames returns err with the fields of ooc's configuration that its
// text names replaced by the flags that set them.
func flagNames(err error) error { return cliflags.FlagNames(err) }

// flagText replaces the field names of ooc's configuration in s with the
// flags that set them.
func flagText(s string) string { return cliflags.FlagText(s) }
