// cx16flags: does cmpxchg16b without a lock prefix leave flags that are not flags?
//
// QEMU 7.2's TCG computes them in a helper from the CC_OP stored in the CPU state, which is
// stale inside a translation block: begun with CC_OP_EFLAGS (popfq and jmp end the block
// before), an add of the same block sets CC_SRC, and the helper takes CC_SRC, the add's
// operand, for the flags. vm.TCGCPUModel takes CX16 away from TCG guests because of it.
//
// Prints "cx16 absent" (exit 0), "flags clean" (exit 0) or "flags garbage 0x..." (exit 1).
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

static __attribute__((aligned(16))) uint64_t slot[2];

int main(void)
{
	unsigned int a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B)) {
		puts("cx16 absent");
		return 0;
	}
	/* Bits no arithmetic instruction sets: anything outside CF PF AF ZF SF OF, IF and bit 1. */
	const uint64_t flags_ok = 0x8d5 | 0x200 | 0x2;
	uint64_t operand = 0xffff8b0cbf8eaa00ull;
	for (int i = 0; i < 100; i++) {
		uint64_t flags, rax = 0, rdx = 0;
		slot[0] = slot[1] = 0;
		__asm__ volatile(
			"pushq $0x202\n\t"
			"popfq\n\t"
			"jmp 1f\n"
			"1:\n\t"
			"sub %[operand], %%rax\n\t"
			"add %[operand], %%rax\n\t"
			"cmpxchg16b (%[slot])\n\t"
			"pushfq\n\t"
			"popq %[flags]\n\t"
			: [flags] "=r"(flags), "+a"(rax), "+d"(rdx)
			: [slot] "r"(slot), "b"(1ull), "c"(2ull), [operand] "r"(operand)
			: "memory", "cc");
		if (flags & ~flags_ok) {
			printf("flags garbage %#llx\n", (unsigned long long)flags);
			return 1;
		}
	}
	puts("flags clean");
	return 0;
}
