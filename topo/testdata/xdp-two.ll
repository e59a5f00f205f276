; Two XDP programs whose names sort opposite to their order in the file: nsperf attaches the
; first in the file, xdp_zulu (XDP_PASS), never xdp_alpha (XDP_DROP), which would cut traffic.
; Built with: llc -march=bpf -filetype=obj xdp-two.ll -o xdp-two.o
target triple = "bpf"

define i32 @xdp_zulu(i8* %ctx) section "xdp" {
  ret i32 2
}

define i32 @xdp_alpha(i8* %ctx) section "xdp" {
  ret i32 1
}

@_license = global [4 x i8] c"GPL\00", section "license"
