#!/usr/bin/env bash
# test-kernel.sh DIR: put Debian's current amd64 kernel package, extracted, into DIR/root
# (boot/vmlinuz-*, lib/modules/RELEASE with modules.dep): the kernel the guest tests boot, one
# that is not the host's. Idempotent: does nothing when DIR/root/boot has a kernel.
set -euo pipefail
dir=${1:-/var/cache/nsperf-test-kernel}
if compgen -G "$dir/root/boot/vmlinuz-*" >/dev/null; then
	exit 0
fi
mkdir -p "$dir"
cd "$dir"
# Guest tests run at once (t.Parallel) and in two lanes: one fetches, the others wait for it
# (flock on the directory's lock file) and then find the kernel there.
exec 9>"$dir/.lock"
flock 9
if compgen -G "$dir/root/boot/vmlinuz-*" >/dev/null; then
	exit 0
fi
# linux-image-amd64 depends on the current linux-image-VERSION-amd64.
pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$pkg" ]; then
	apt-get update -qq
	pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
[ -n "$pkg" ] || { echo "test-kernel.sh: apt knows no linux-image-amd64" >&2; exit 1; }
rm -f ./*.deb
# apt's sandbox user cannot write here; the download is run as root on purpose.
apt-get download -o APT::Sandbox::User=root "$pkg" >&2
rm -rf root.tmp
dpkg -x ./"$pkg"_*.deb root.tmp
release=$(basename root.tmp/lib/modules/*)
depmod -b root.tmp "$release"
rm -rf root
mv root.tmp root
rm -f ./*.deb
echo "test-kernel.sh: $dir/root: $(basename root/boot/vmlinuz-*)" >&2
