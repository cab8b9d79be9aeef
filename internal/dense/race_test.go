//go:build race

package dense

// The race detector slows the kernels down twentyfold; tests trim their sizes.
const raceEnabled = true
