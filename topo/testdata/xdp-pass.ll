; An XDP program that passes every packet, in LLVM IR: llc -march=bpf -filetype=obj pass.ll
target triple = "bpf"

define i32 @xdp_pass_obj(i8* %ctx) section "xdp" {
  ret i32 2
}

@_license = global [4 x i8] c"GPL\00", section "license"
