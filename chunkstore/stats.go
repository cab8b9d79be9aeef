package chunkstore

import "github.com/falkon-ooc/falkon-ooc/internal/colstats"

// MaxDistinct is the most distinct values a Column records.
const MaxDistinct = colstats.MaxDistinct

// setColumn fills c's statistics from s (package colstats, the module's
// one statistics routine).
func setColumn(c *Column, s *colstats.Stats) {
	sum := s.Summary()
	c.Count, c.Integral, c.Distinct = sum.Count, sum.Integral, sum.Distinct
	c.Mean, c.Std, c.Min, c.Max = sum.Mean, sum.Std, sum.Min, sum.Max
}
