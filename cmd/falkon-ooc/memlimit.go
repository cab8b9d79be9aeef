package main

import "github.com/falkon-ooc/falkon-ooc/internal/cliflags"

// memoryLimit is --max-memory as ooc.RunOptions.MaxMemory: the flag's
// bytes, or 0 (ooc.DefaultMaxMemory) when it is not given.
func memoryLimit(flag string) (int64, error) {
	if flag == "" {
		return 0, nil
	}
	n, err := parseBytes(flag)
	if err != nil {
		return 0, usagef("--max-memory: %v", err)
	}
	return n, nil
}

// parseBytes reads a size such as 12GiB, 800MB or 123456, as the flags
// both programs share read --max-memory (cliflags.ParseBytes).
func parseBytes(s string) (int64, error) { return cliflags.ParseBytes(s) }
