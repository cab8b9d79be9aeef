package ooc

import "github.com/falkon-ooc/falkon-ooc/internal/container"

// Checkpoints share the model file's container (internal/container).
const (
	containerHeader  = container.HeaderSize
	containerTrailer = container.TrailerSize
)

var (
	castagnoli     = container.Castagnoli
	writeContainer = container.Write
	readContainer  = container.Read
	decodeArrays   = container.DecodeArrays
)
