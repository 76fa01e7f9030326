package recall

import "golang.org/x/sys/cpu"

// haveSketchKernel says whether sketchDotAVX2 may be called: the processor
// has AVX2 and the system saves its registers.
var haveSketchKernel = cpu.X86.HasAVX2

// sketchDotAVX2 returns Σ over the n bytes of sk (n a positive multiple of
// 32) of their low nibble times the even weight and their high nibble times
// the odd weight, the weights laid out as sketchQuery.packed: 64 for each
// 32 bytes.
//
//go:noescape
func sketchDotAVX2(w *int8, sk *byte, n int) int32
