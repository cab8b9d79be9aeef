package cliflags_test

import (
	"slices"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
)

// TestSplitList: a list flag's value is split at commas and each item
// trimmed; an empty value, or one of spaces, is no list.
func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"a", []string{"a"}},
		{" a , b,c ", []string{"a", "b", "c"}},
		{"a,,b", []string{"a", "", "b"}},
	} {
		if got := cliflags.SplitList(c.in); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("SplitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
