//go:build !amd64 || noasm

package dense

func axpy4(a *[4]float64, u []float64, ldu int, y []float64) { axpy4Go(a, u, ldu, y) }

func dot4(u []float64, ldu int, x []float64) [4]float64 { return dot4Go(u, ldu, x) }
