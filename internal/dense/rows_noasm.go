//go:build !amd64 || noasm

package dense

func axpy4(a *[4]float64, u []float64, ldu int, y []float64) { axpy4Go(a, u, ldu, y) }

func dot4(u []float64, ldu int, x []float64) [4]float64 { return dot4Go(u, ldu, x) }

func axpy4F32(a *[4]float32, u []float32, ldu int, y []float32) { axpy4F32Go(a, u, ldu, y) }

func axpyF32(a float32, x, y []float32) { axpyF32Go(a, x, y) }

func scaleF32(s float32, x []float32) { scaleF32Go(s, x) }

// packT12 is nil without assembly: packA packs element by element.
var packT12 func(kb int, alpha float32, src []float32, lds, npan int, dst []float32)
