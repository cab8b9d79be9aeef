//go:build !amd64 || noasm

package dense

// kernels lists the micro-kernels usable on this CPU, fastest first. Without
// assembly only the portable Go kernel is available.
func kernels() []microKernel[float64] { return []microKernel[float64]{goKernel} }

// kernels32 is kernels for float32 arithmetic: the portable Go kernel,
// kernel4x4[float32], whose doc comment gives the reference loop.
func kernels32() []microKernel[float32] { return []microKernel[float32]{goKernel32} }
