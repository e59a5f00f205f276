#!/usr/bin/env bash
# veth-regress-kernel.sh [DIR]: a module tree of Debian's 6.12 kernel (the image of
# ovs-patch-kernel.sh) whose veth is built with a small tso_max_size, a stand-in for a
# performance regression: DIR/veth-slow/lib/modules/RELEASE, the image's tree with veth.ko
# replaced. The stock tree is DIR/image. It prints the image's path. Idempotent (a marker
# per release); the bisect test (cmd/nsperf/bisect_test.go) uses it.
set -euo pipefail
dir=${1:-/var/cache/nsperf-ovs-patch}
here=$(cd "$(dirname "$0")" && pwd)
image=$(bash "$here/ovs-patch-kernel.sh" "$dir")
release=$(basename "$image" | sed 's/^vmlinuz-//')
cd "$dir"
if [ -f "done-veth-$release" ]; then
	echo "$image"
	exit 0
fi
rm -rf debs-veth veth-src veth-slow
mkdir -p debs-veth
# The source of the release the image is: its package version names it.
version=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ {print $2}')
(cd debs-veth && apt-get download -o APT::Sandbox::User=root "linux-source-6.12=$version" >&2)
mkdir -p veth-src
dpkg -x debs-veth/linux-source-6.12_*.deb veth-src
tar -xJf veth-src/usr/src/linux-source-6.12.tar.xz -C veth-src linux-source-6.12/drivers/net/veth.c
mkdir -p veth-src/slow
cp veth-src/linux-source-6.12/drivers/net/veth.c veth-src/slow/veth.c
# The regression: every veth's TSO limit, hence its GSO packets, at 8 KB instead of 512 KB.
sed -i 's/netif_set_tso_max_size(dev, GSO_MAX_SIZE);/netif_set_tso_max_size(dev, 8192);/' veth-src/slow/veth.c
grep -q 'netif_set_tso_max_size(dev, 8192);' veth-src/slow/veth.c ||
	{ echo "veth-regress-kernel.sh: the change does not apply to $version's veth.c" >&2; exit 1; }
echo 'obj-m := veth.o' >veth-src/slow/Kbuild
make -s -C "$dir/hdr/usr/src/linux-headers-$release" M="$dir/veth-src/slow" modules >&2
tree=$dir/veth-slow/lib/modules/$release
mkdir -p "$dir/veth-slow/lib/modules"
cp -al "$dir/image/lib/modules/$release" "$tree" # hard links: only veth.ko differs
find "$tree/kernel/drivers/net" -maxdepth 1 -name 'veth.ko*' -delete
cp veth-src/slow/veth.ko "$tree/kernel/drivers/net/veth.ko"
depmod -b "$dir/veth-slow" "$release"
rm -rf debs-veth veth-src
touch "done-veth-$release"
echo "$image"
