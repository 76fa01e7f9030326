//go:build !amd64

package recall

// haveSketchKernel is false where there is no vector kernel: byte tables
// score every sketch byte.
const haveSketchKernel = false

func sketchDotAVX2(w *int8, sk *byte, n int) int32 {
	panic("recall: no sketch kernel on this architecture")
}
