// Package featenc says how input columns that are not numbers become
// stored feature columns, and applies that rule the same way at ingest and
// at predict time.
//
// # Overview
//
// A Spec lists the encoded input columns, each with its Kind:
//
//   - OneHot: a categorical column (strings, dictionaries, integers named
//     as categorical). Its kept levels, sorted, each become a feature
//     "name=level" holding 1 in the rows of that level and 0 elsewhere;
//     levels not kept share a feature "name=(other)", and NULL, when the
//     training data held it, is a level of its own, "name=(null)".
//   - Time: a date or timestamp, held as days since 1970-01-01 UTC (the
//     fraction is the time of day), and optionally cyclic features: for
//     each of hour, dow (day of the week) and doy (day of the year) a sine
//     and a cosine of its phase.
//
// The raw value of a row, as ingest's first pass stores it and as predict
// reads it, is a float64: Code(level) for a categorical value (NullCode for
// NULL), days since the epoch for a time. An Encoder, compiled once from a
// Spec, expands raw values into the column's features.
//
// Levels are counted by a Counter, exact up to a cap of distinct levels,
// then by the Misra–Gries summary, whose memory is bounded whatever the
// number of distinct levels; the number of distinct levels is then
// estimated from the k smallest hashes seen.
//
// # Scaling
//
// A fit standardises each feature by its standard deviation. One-hot
// features are instead divided by Scale (√2): two rows of different
// levels then differ by 1/√2 in two features, a squared distance of 1,
// which is what a difference of one standard deviation in a numeric
// feature gives. The fit learns nothing from the levels' frequencies
// through this scale, so a rare level is as far from the others as a
// common one.
//
// # Concurrency
//
// A Spec and an Encoder are read-only after construction and safe for
// concurrent use. A Counter is not.
//
// # Invariants
//
// Features lists, per column, the names of its stored features in order;
// a Spec's columns' features are distinct. An Encoder maps every raw
// value to exactly one one-hot feature or to none (an unseen level with no
// "other" feature, counted as unseen).
package featenc
