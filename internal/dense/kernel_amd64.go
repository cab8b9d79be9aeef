//go:build amd64 && !noasm

package dense

// kernels lists the micro-kernels usable on this CPU, fastest first.
func kernels() []microKernel { return []microKernel{goKernel} }
