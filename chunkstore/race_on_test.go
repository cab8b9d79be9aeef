//go:build race

package chunkstore

const raceEnabled = true
