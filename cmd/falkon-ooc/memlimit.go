package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// memoryLimit is the byte limit of --max-memory: the flag's value, or by
// default 80 % of the smaller of physical memory and this process's cgroup
// limit (0, no limit, where neither can be read).
func memoryLimit(flag string) (int64, error) {
	if flag != "" {
		n, err := parseBytes(flag)
		if err != nil {
			return 0, usagef("--max-memory: %v", err)
		}
		return n, nil
	}
	total := physicalMemory()
	if c := cgroupLimit(); c > 0 && (total == 0 || c < total) {
		total = c
	}
	return total / 10 * 8, nil
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

// physicalMemory reads MemTotal from /proc/meminfo (0 if unavailable).
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads the memory limit of this process's cgroup: memory.max
// (v2) or memory.limit_in_bytes (v1). It is 0 if there is none or it is
// unlimited ("max", or v1's huge page-aligned number, which the caller's
// minimum with physical memory absorbs).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = "/sys/fs/cgroup" + parts[2] + "/memory.max"
		case parts[1] == "memory":
			file = "/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes"
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
