package main

import (
	"flag"
	"sort"
	"strings"
)

// aliasUsage marks a flag that is another spelling of one documented
// under its own name: printDefaults leaves it out.
const aliasUsage = "\x00alias"

// addAliases defines the British spelling of every flag whose name says
// "center" (--centres, --tune-centres, --centres-sampling), the spelling
// the documentation's prose uses, as the same flag.
func addAliases(fs *flag.FlagSet) {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Name, "center") {
			names = append(names, f.Name)
		}
	})
	for _, name := range names {
		alias := strings.ReplaceAll(name, "center", "centre")
		if fs.Lookup(alias) == nil {
			fs.Var(fs.Lookup(name).Value, alias, aliasUsage)
		}
	}
}

// suggestFlag returns the defined flag nearest to name (an edit distance
// of at most 2, or name a prefix of it), or "".
func suggestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 3
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != aliasUsage {
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
