// Package falkonooc is the root of falkon-ooc, an out-of-core
// implementation of FALKON (Rudi, Carratino, Rosasco, NIPS 2017) in Go. It
// holds no code: see package ooc for the solver, stream for the Source
// interface over chunk readers, chunkstore for the on-disk format, and
// cmd/falkon-ooc for the command-line tool.
package falkonooc
