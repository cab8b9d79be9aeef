//go:build !race

package chunkstore

const raceEnabled = false
