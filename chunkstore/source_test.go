package chunkstore_test

import (
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// *chunkstore.Reader is a stream.Source.
var _ stream.Source = (*chunkstore.Reader)(nil)
