package cliflags

import (
	"flag"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

// Tables holds the flags that say how categorical and time columns of
// Parquet/CSV inputs become features: ingest's and inspect's, and fit's
// and tune's on Parquet/CSV inputs, in both programs.
type Tables struct {
	Categorical, TimeFeatures, AboveMaxLevels string
	MaxLevels                                 int
}

// TableFlags names the flags Tables declares.
var TableFlags = []string{"categorical", "max-levels", "above-max-levels", "time-features"}

// Add declares the flags on fs, each help text starting with prefix
// ("Parquet/CSV inputs: " for fit and tune).
func (t *Tables) Add(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&t.TimeFeatures, "time-features", "", prefix+"cyclic `features` of every date and timestamp column, comma-separated: hour, dow, doy (a sine and a cosine each, beside the days since 1970-01-01); date and timestamp columns are then default features")
	fs.StringVar(&t.Categorical, "categorical", "", prefix+"integer `column`s that are categorical features, comma-separated; string columns always are")
	fs.IntVar(&t.MaxLevels, "max-levels", ingest.DefaultMaxLevels, prefix+"one-hot features for a categorical column of at most this many levels; a column of more is encoded as --above-max-levels says")
	fs.StringVar(&t.AboveMaxLevels, "above-max-levels", "target", prefix+"the `encoding` of a categorical column of more than --max-levels levels: target (one feature, the mean target of the row's level, out of fold in the store; needs one numeric or two-class target, else onehot) or onehot (the --max-levels most frequent levels, the rest as column=(other))")
}

// Apply checks the flags' values and sets the fields of cfg they give.
func (t *Tables) Apply(cfg *ingest.Config) error {
	if t.MaxLevels < 1 {
		return Usagef("--max-levels must be at least 1")
	}
	if t.AboveMaxLevels != "target" && t.AboveMaxLevels != "onehot" {
		return Usagef("--above-max-levels must be target or onehot, not %q", t.AboveMaxLevels)
	}
	cfg.Categorical = SplitList(t.Categorical)
	cfg.TimeFeatures = SplitList(t.TimeFeatures)
	cfg.MaxLevels = t.MaxLevels
	cfg.AboveMaxLevels = t.AboveMaxLevels
	return nil
}

// SplitList splits a comma-separated flag value (--target a,b), trimming
// spaces around each item; nil for a value that is empty or all spaces.
// Every command of both programs reads its list flags with it.
func SplitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
