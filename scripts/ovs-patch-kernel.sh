#!/usr/bin/env bash
# ovs-patch-kernel.sh [DIR]: a real patch to validate. Puts into DIR (default
# /var/cache/nsperf-ovs-patch):
#   image/boot/vmlinuz-RELEASE           Debian's current 6.12 kernel, as shipped
#   image/lib/modules/RELEASE/           its modules, as shipped (.ko.xz)
#   stock/lib/modules/RELEASE/           the same tree, with net/openvswitch built from
#   patched/lib/modules/RELEASE/         linux-source-6.12 without and with the one line of
#                                        "openvswitch: raise internal port TSO limit"
# Both openvswitch builds are made the same way, against the kernel's own headers, so that the
# patch is the only difference. Idempotent: a DIR that has all of it is left as it is. Prints
# the image path on stdout.
set -euo pipefail
dir=${1:-/var/cache/nsperf-ovs-patch}
mkdir -p "$dir"
cd "$dir"

# The release follows the candidate of linux-source-6.12: security updates move it.
version=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ {print $2}')
if [ -z "$version" ] || [ "$version" = "(none)" ]; then
	apt-get update -qq
	version=$(apt-cache policy linux-source-6.12 | awk '/Candidate:/ {print $2}')
fi
[ -n "$version" ] && [ "$version" != "(none)" ] || { echo "ovs-patch-kernel.sh: apt knows no linux-source-6.12 (bookworm-security)" >&2; exit 1; }
abi=$(echo "$version" | sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+)-[^~]*~deb([0-9]+).*/\1+deb\2/')
release=$abi-amd64

if [ -f "done-$release" ]; then
	echo "$dir/image/boot/vmlinuz-$release"
	exit 0
fi
echo "ovs-patch-kernel.sh: Debian $version ($release) into $dir" >&2
# What the out-of-tree build needs: the compiler the kernel was built with, make, pahole for
# the modules' BTF, depmod, and the libraries of the kbuild programs.
need=()
for tool in make:make gcc-12:gcc-12 pahole:pahole depmod:kmod xz:xz-utils; do
	command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
dpkg -s libelf1 libssl3 >/dev/null 2>&1 || need+=(libelf1 libssl3)
if [ ${#need[@]} -gt 0 ]; then
	apt-get install -y -qq "${need[@]}" >&2 || { apt-get update -qq && apt-get install -y -qq "${need[@]}" >&2; }
fi
rm -rf debs image stock patched hdr src done-*
mkdir -p debs
# apt's sandbox user cannot write here; the download is run as root on purpose.
(cd debs && apt-get download -o APT::Sandbox::User=root \
	"linux-image-$release-unsigned=$version" "linux-headers-$release=$version" \
	"linux-headers-$abi-common=$version" "linux-kbuild-$abi=$version" "linux-source-6.12=$version" >&2)

dpkg -x debs/linux-image-"$release"-unsigned_*.deb image
# The headers unpacked off the root: their Makefile includes the common headers by an
# absolute path, which points into this directory instead.
for p in linux-headers-"$release" linux-headers-"$abi"-common linux-kbuild-"$abi"; do
	dpkg -x debs/"$p"_*.deb hdr
done
headers=$dir/hdr/usr/src/linux-headers-$release
sed -i "s#^include /usr/src/#include $dir/hdr/usr/src/#" "$headers/Makefile"

mkdir -p src
dpkg -x debs/linux-source-6.12_*.deb src
tar -xJf src/usr/src/linux-source-6.12.tar.xz -C src linux-source-6.12/net/openvswitch
rm -f src/usr/src/linux-source-6.12.tar.xz

build() { # build NAME: net/openvswitch as NAME/, installed into a copy of the image's tree
	local name=$1 tree=$dir/$1/lib/modules/$release
	make -s -C "$headers" M="$dir/src/$name" CONFIG_OPENVSWITCH=m CONFIG_OPENVSWITCH_VXLAN=m modules >&2
	mkdir -p "$dir/$name/lib/modules"
	cp -al "$dir/image/lib/modules/$release" "$tree" # hard links: only openvswitch.ko differs
	# The distribution's compressed module makes way for the one built here.
	find "$tree/kernel/net/openvswitch" -name 'openvswitch.ko*' -delete
	cp "$dir/src/$name/openvswitch.ko" "$tree/kernel/net/openvswitch/openvswitch.ko"
	depmod -b "$dir/$name" "$release"
}
cp -a src/linux-source-6.12/net/openvswitch src/stock
cp -a src/linux-source-6.12/net/openvswitch src/patched
# The seed's change: in do_setup(), after `netdev->hw_features = netdev->features;`.
sed -i 's/^\(\tnetdev->hw_features = netdev->features;\)$/\1\n\n\tnetif_set_tso_max_size(netdev, GSO_MAX_SIZE);/' src/patched/vport-internal_dev.c
grep -q 'netif_set_tso_max_size(netdev, GSO_MAX_SIZE);' src/patched/vport-internal_dev.c ||
	{ echo "ovs-patch-kernel.sh: the patch does not apply to $version's vport-internal_dev.c" >&2; exit 1; }
build stock
build patched
depmod -b image "$release"
rm -rf debs src/linux-source-6.12
touch "done-$release"
echo "$dir/image/boot/vmlinuz-$release"
