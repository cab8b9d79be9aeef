package featenc

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DefaultCap is the number of distinct levels a Counter counts exactly
// before it turns into a bounded summary.
const DefaultCap = 1 << 16

// kmv is the number of smallest hashes kept to estimate the distinct
// levels beyond the cap.
const kmv = 1024

// CounterBytes is the most memory a Counter with the given cap holds, for
// memory estimates: per counted level its map entry, its string header
// and bytes (levBytes each at most), and the hashes of the estimate.
func CounterBytes(cap, levBytes int) int64 {
	return int64(cap)*int64(64+levBytes) + 2*kmv*8
}

// Counter counts the levels of a categorical column: exactly while there
// are at most its cap of distinct levels, then as a Misra–Gries summary
// (each kept count is at most about 2·Total/cap short of the true count,
// and every level more frequent than that is kept). Its memory is bounded
// by the cap whatever the number of distinct levels. Levels are keyed by
// their Code, so that a value can be taken back (Remove) knowing only its
// code. A Counter is not safe for concurrent use.
type Counter struct {
	cap     int
	counts  map[float64]level
	total   int64 // non-NULL values counted
	nulls   int64
	reduced bool     // the summary has dropped levels: counts are lower bounds
	hashes  []uint64 // the kmv smallest distinct hashes, ascending
}

type level struct {
	name string
	n    int64
}

// NewCounter returns a Counter exact up to cap distinct levels (0:
// DefaultCap).
func NewCounter(cap int) *Counter {
	if cap <= 0 {
		cap = DefaultCap
	}
	return &Counter{cap: cap, counts: map[float64]level{}}
}

// Add counts one value of level v and returns its code (Code(v)).
func (c *Counter) Add(v string) float64 {
	h := hash(v)
	code := float64(h >> 11)
	c.add(h, code, v, nil, 1)
	return code
}

// AddBytes counts one value of level string(v) and returns its code,
// without allocating unless the level is new.
func (c *Counter) AddBytes(v []byte) float64 {
	h := hashBytes(v)
	code := float64(h >> 11)
	c.add(h, code, "", v, 1)
	return code
}

// AddN counts n values of level v.
func (c *Counter) AddN(v string, n int64) {
	if n > 0 {
		h := hash(v)
		c.add(h, float64(h>>11), v, nil, n)
	}
}

// add counts n values of the level of hash h and code: s, or b when s is
// "" and b is not nil.
func (c *Counter) add(h uint64, code float64, s string, b []byte, n int64) {
	c.total += n
	c.addHash(h)
	if e, ok := c.counts[code]; ok {
		e.n += n
		c.counts[code] = e
		return
	}
	if b != nil {
		s = string(b)
	} else {
		s = strings.Clone(s) // the caller's buffer is reused
	}
	c.counts[code] = level{s, n}
	if len(c.counts) > c.cap {
		// Misra–Gries, in bulk: as many counts of every level, the new
		// one included, as the (cap/2+1)-th largest count cancel, which
		// removes at least half the levels, so the work per value stays
		// O(log cap) on average.
		c.reduce(c.cap / 2)
	}
}

// Remove takes back one value of the level of code (a row dropped after
// it was counted), or a NULL for NullCode. A level the summary no longer
// holds is left alone.
func (c *Counter) Remove(code float64) {
	if code == NullCode {
		c.nulls--
		return
	}
	c.total--
	if e, ok := c.counts[code]; ok {
		if e.n <= 1 {
			delete(c.counts, code)
		} else {
			e.n--
			c.counts[code] = e
		}
	}
}

// reduce subtracts the (keep+1)-th largest count from every count and
// drops the levels left at 0 or below: at most keep remain.
func (c *Counter) reduce(keep int) {
	c.reduced = true
	ns := make([]int64, 0, len(c.counts))
	for _, e := range c.counts {
		ns = append(ns, e.n)
	}
	slices.SortFunc(ns, func(a, b int64) int { return cmp.Compare(b, a) })
	cut := ns[keep]
	for k, e := range c.counts {
		if e.n <= cut {
			delete(c.counts, k)
		} else {
			e.n -= cut
			c.counts[k] = e
		}
	}
}

// AddNull counts a NULL.
func (c *Counter) AddNull() { c.nulls++ }

func (c *Counter) addHash(h uint64) {
	i, found := slices.BinarySearch(c.hashes, h)
	if found || (i == kmv) {
		return
	}
	if len(c.hashes) == kmv {
		c.hashes = c.hashes[:kmv-1]
	}
	c.hashes = slices.Insert(c.hashes, i, h)
}

// Merge adds the counts of o into c, then reduces c to its cap as the
// Misra–Gries merge does (subtracting the count of the (cap+1)-th level).
// Merging the same counters in the same order gives the same result.
func (c *Counter) Merge(o *Counter) {
	c.total += o.total
	c.nulls += o.nulls
	c.reduced = c.reduced || o.reduced
	for k, e := range o.counts {
		if have, ok := c.counts[k]; ok {
			e.n += have.n
		}
		c.counts[k] = e
	}
	for _, h := range o.hashes {
		c.addHash(h)
	}
	if len(c.counts) > c.cap {
		c.reduce(c.cap)
	}
}

// Total returns the non-NULL values counted; Nulls the NULLs.
func (c *Counter) Total() int64 { return c.total }

// Nulls returns the NULLs counted.
func (c *Counter) Nulls() int64 { return c.nulls }

// Distinct returns the number of distinct levels (NULL aside): exact when
// exact is true, else estimated from the smallest hashes (within about
// 3 % at one standard deviation, and never more than Total).
func (c *Counter) Distinct() (n int64, exact bool) {
	if !c.reduced {
		return int64(len(c.counts)), true
	}
	if len(c.hashes) < kmv {
		return int64(len(c.hashes)), true
	}
	// (k−1) / (the k-th smallest hash as a fraction of 2⁶⁴).
	f := float64(c.hashes[kmv-1]) / (1 << 64)
	return min(int64(float64(kmv-1)/f), c.total), false // never more levels than values
}

// Levels chooses a one-hot column's levels: the max most frequent (ties
// by level, ascending), returned sorted, and whether others remain.
func (c *Counter) Levels(max int) (levels []string, other bool) {
	type lc struct {
		l string
		n int64
	}
	all := make([]lc, 0, len(c.counts))
	for _, e := range c.counts {
		all = append(all, lc{e.name, e.n})
	}
	slices.SortFunc(all, func(a, b lc) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return strings.Compare(a.l, b.l)
	})
	other = c.reduced || len(all) > max
	all = all[:min(max, len(all))]
	for _, x := range all {
		levels = append(levels, x.l)
	}
	slices.Sort(levels)
	return levels, other
}

// Column returns the one-hot encoding of the column named source with at
// most max levels; OtherLevels are the other levels the counter holds.
func (c *Counter) Column(source string, max int) Column {
	levels, other := c.Levels(max)
	col := Column{Source: source, Kind: OneHot, Levels: levels, Other: other, Null: c.nulls > 0, Scale: Scale}
	if other {
		for _, e := range c.counts {
			if _, kept := slices.BinarySearch(levels, e.name); !kept {
				col.OtherLevels = append(col.OtherLevels, e.name)
			}
		}
		slices.Sort(col.OtherLevels)
	}
	col.Features = FeatureNames(col)
	return col
}

// Note describes the counted column and its encoding with max levels, for
// people: "one-hot: 12 levels (exact), 3 NULL as the level (null)" or
// "one-hot: the 32 most frequent of about 1000000 distinct levels
// (estimated) cover at least 4.1 % of the values, the rest as (other)
// (more levels than --max-levels 32)".
func (c *Counter) Note(max int) string {
	n, exact := c.Distinct()
	how := "exact"
	if !exact {
		how = "estimated"
	}
	var s string
	if levels, other := c.Levels(max); other {
		cover := "cover"
		if c.reduced { // the summary's counts are lower bounds
			cover = "cover at least"
		}
		s = fmt.Sprintf("one-hot: the %d most frequent of %s%d distinct levels (%s) %s %.1f %% of the values, the rest as %s (more levels than --max-levels %d)",
			len(levels), about(exact), n, how, cover, 100*c.cover(max), OtherLevel, max)
	} else {
		s = fmt.Sprintf("one-hot: %d levels (%s)", len(levels), how)
	}
	if c.nulls > 0 {
		s += fmt.Sprintf(", %d NULL as the level %s", c.nulls, NullLevel)
	}
	return s
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func about(exact bool) string {
	if exact {
		return ""
	}
	return "about "
}

// counterJSON is a Counter as JSON: its levels sorted by name, so that
// the same counts give the same bytes.
type counterJSON struct {
	Cap     int          `json:"cap"`
	Levels  []levelCount `json:"levels"`
	Total   int64        `json:"total"`
	Nulls   int64        `json:"nulls,omitempty"`
	Reduced bool         `json:"reduced,omitempty"`
	Hashes  []uint64     `json:"hashes,omitempty"`
}

type levelCount struct {
	Level string `json:"l"`
	N     int64  `json:"n"`
}

// MarshalJSON encodes the counter (for a distributed ingest, whose
// tasks count the levels of one file each and send them to the driver,
// which merges them in file order).
func (c *Counter) MarshalJSON() ([]byte, error) {
	j := counterJSON{Cap: c.cap, Total: c.total, Nulls: c.nulls, Reduced: c.reduced, Hashes: c.hashes}
	j.Levels = make([]levelCount, 0, len(c.counts))
	for _, e := range c.counts {
		j.Levels = append(j.Levels, levelCount{e.name, e.n})
	}
	slices.SortFunc(j.Levels, func(a, b levelCount) int { return strings.Compare(a.Level, b.Level) })
	return json.Marshal(j)
}

// UnmarshalJSON decodes MarshalJSON's encoding: the same counter, whose
// Merge, Levels and Distinct give what the original's do.
func (c *Counter) UnmarshalJSON(b []byte) error {
	var j counterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Cap <= 0 || len(j.Levels) > j.Cap || len(j.Hashes) > kmv || !slices.IsSorted(j.Hashes) {
		return fmt.Errorf("featenc: a counter of cap %d with %d levels and %d hashes", j.Cap, len(j.Levels), len(j.Hashes))
	}
	*c = Counter{cap: j.Cap, counts: make(map[float64]level, len(j.Levels)), total: j.Total, nulls: j.Nulls, reduced: j.Reduced, hashes: j.Hashes}
	for _, l := range j.Levels {
		code := Code(l.Level)
		if _, dup := c.counts[code]; dup || l.N <= 0 {
			return fmt.Errorf("featenc: a counter with level %q twice or of count %d", l.Level, l.N)
		}
		c.counts[code] = level{l.Level, l.N}
	}
	return nil
}
