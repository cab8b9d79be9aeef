//go:build !amd64 || noasm

package dense

// kernels lists the micro-kernels usable on this CPU, fastest first. Without
// assembly only the portable Go kernel is available.
func kernels() []microKernel { return []microKernel{goKernel} }
