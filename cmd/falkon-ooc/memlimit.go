package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

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

// parseBytes reads a size such as 12GiB, 12G, 800MB, 800M or 123456 (a
// plain number is bytes; K, M, G, T are powers of 1024 with or without
// "iB", and of 1000 when written "KB", "MB", "GB", "TB").
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.ToUpper(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size > 0 (e.g. 12GiB, 800MB)", s)
	}
	mult := map[string]float64{
		"": 1, "B": 1,
		"K": 1 << 10, "KIB": 1 << 10, "KB": 1e3,
		"M": 1 << 20, "MIB": 1 << 20, "MB": 1e6,
		"G": 1 << 30, "GIB": 1 << 30, "GB": 1e9,
		"T": 1 << 40, "TIB": 1 << 40, "TB": 1e12,
	}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, unit)
	}
	if v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v * mult), nil
}
