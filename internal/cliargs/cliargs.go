// Package cliargs holds the argument rule shared by the command-line
// tools (falkon-ooc and falkon-ooc-beam): flags may come before or after
// the inputs, in every command.
package cliargs

import (
	"flag"
	"fmt"
	"strings"
)

// Permute moves the flags of args (and the values of flags that take one)
// before the other arguments, so that flags may follow the inputs in every
// command: "predict in.parquet --model m" parses as "predict --model m
// in.parquet". Everything after "--" is an argument, and so is "-"
// (stdin). An unknown flag is moved too, so that fs.Parse reports it.
// Like the flag package, a flag that takes a value takes the next argument
// unless written --name=value; it is an error when there is none.
func Permute(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 == len(args) {
			return nil, fmt.Errorf("flag needs an argument: -%s", name) // as flag.Parse says it
		}
		i++
		flags = append(flags, args[i])
	}
	if len(rest) == 0 {
		return flags, nil
	}
	return append(append(flags, "--"), rest...), nil
}
