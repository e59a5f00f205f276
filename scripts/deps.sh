#!/usr/bin/env bash
# deps.sh: install what nsperf needs on a Debian 12 machine, only when it is missing.
# Idempotent: a second run installs nothing and touches no apt source.
#   git, iperf3, netperf (Debian's non-free component), sockperf, xdp-tools, openvswitch-switch, ethtool, iproute2,
#   postgresql, whose server the history tests start for themselves, and
#   chromium-headless-shell, in which the HTML report tests render their pages, and
#   qemu-system-x86, qemu-user and busybox-static for runs on a kernel under test (--kernel), and
#   make, gcc-12, dwarves, kmod, xz-utils, libelf1 and libssl3 for nsperf build, and
#   flex, bison, bc, libelf-dev, libssl-dev and ccache for its whole-kernel builds, and gcc
#   (cc) and bubblewrap, in which every build of a patch's or a tree's code runs.
set -euo pipefail

missing=()
need() { # need COMMAND PACKAGE
	command -v "$1" >/dev/null 2>&1 || missing+=("$2")
}
need iperf3 iperf3
need netperf netperf
need netserver netperf
need sockperf sockperf
# A pktgen workload's receiver (xdp_bench:) counts the frames with xdp-tools' xdp-bench, in a
# guest on the kernel under test (this host's kernel lacks a tracepoint its programs need).
need xdp-bench xdp-tools
need ethtool ethtool
need ip iproute2
# Patches are checked against git apply (the differential test) and --source trees are read
# with git.
need git git
need ovs-vswitchd openvswitch-switch
need ovsdb-tool openvswitch-common
# nsperf run --kernel boots the kernel under test in QEMU, with a static busybox as the
# initramfs's shell (a dynamic one would need the host's libraries there).
need qemu-system-x86_64 qemu-system-x86
# QEMU's x86 translator in user mode: the test of the guest CPU model TCG guests get
# (vm.TCGCPUModel) runs a program under it.
need qemu-x86_64 qemu-user
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' || missing+=(busybox-static)
# nsperf build (and run --patch) builds modules against Debian's 6.12 headers: with the
# compiler that built that kernel, make, pahole for the modules' BTF, depmod, xz for the
# source, and the libraries of the headers' kbuild programs.
need make make
need x86_64-linux-gnu-gcc-12 gcc-12
# The programs of the kernel's selftests a tool runs (udpgso_bench_tx and _rx) are built from
# the base's tree with the system's cc.
need cc gcc
# Every compiler and make run on a patch's or a tree's code runs as nobody under bubblewrap,
# with /root, /home, SSH keys and nsperf's caches hidden (internal/sandbox).
need bwrap bubblewrap
need pahole dwarves
need depmod kmod
need xz xz-utils
# A whole kernel (a built-in change) is built from the source: Kconfig's parser (flex,
# bison), bc for the timer constants, objtool's and the certificate tools' headers, and
# ccache, which keeps objects across the cache's trees.
need flex flex
need bison bison
need bc bc
need ccache ccache
for lib in libelf1 libssl3 libelf-dev libssl-dev; do
	dpkg-query -W -f='${Status}' "$lib" 2>/dev/null | grep -q 'install ok installed' || missing+=("$lib")
done
# The HTML report tests render pages in a real browser.
need chromium-headless-shell chromium-headless-shell
# The server binaries are not on PATH: look where Debian puts them.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
# Deduplicate package names.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root (or: apt-get install ${missing[*]})" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing packages: ${missing[*]}; this script knows only apt (Debian); install them with your distribution's tools" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=no
apt_update() {
	if [ "$apt_updated" = no ]; then
		apt-get update -qq
		apt_updated=yes
	fi
}

# netperf lives in Debian's non-free component, which new machines do not enable. Add a source
# that is a copy of the machine's own debian.sources with only the non-free component, so the
# existing mirror (and its snapshot pinning) is reused and nothing is configured twice.
nonfree=/etc/apt/sources.list.d/nsperf-non-free.sources
if printf '%s\n' "${missing[@]}" | grep -qx netperf; then
	apt_update
	if ! apt-cache policy netperf 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		src=/etc/apt/sources.list.d/debian.sources
		if [ -f "$src" ] && [ ! -f "$nonfree" ]; then
			echo "deps.sh: enabling Debian's non-free component for netperf ($nonfree)" >&2
			sed -E 's/^Components:.*/Components: non-free/' "$src" >"$nonfree"
		elif [ ! -f "$src" ] && [ ! -f "$nonfree" ]; then
			echo "deps.sh: netperf is in Debian's non-free component; enable it in your apt sources and re-run" >&2
			exit 1
		fi
		apt_updated=no
		apt_update
	fi
fi

apt_update
echo "deps.sh: installing ${missing[*]}" >&2
# The package scripts of openvswitch-switch try to start the system OVS; nsperf runs its own
# private instance and needs none, so a refused service start (no init system) is not an error.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
