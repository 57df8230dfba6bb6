#!/usr/bin/env bash
# The Debian package `cpack -G DEB` makes from the build: it holds what `cmake --install`
# installs (the same paths under /usr), its Depends computed, and once unpacked into a
# scratch root with `dpkg --root` the command runs from there (its library found by its
# RUNPATH), the builtin loads, the man page and the completion are in place.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
build=${LEASEJUDGE_BINARY_DIR:?}
. "$src/tests/skip.sh"
for c in cpack dpkg dpkg-deb dpkg-shlibdeps; do
  command -v "$c" >/dev/null || skip_or_fail "$c is not installed (cmake, dpkg, dpkg-dev)"
done
[ -f "$build/CPackConfig.cmake" ] || skip_or_fail "no CPackConfig.cmake in $build"

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
. "$src/tests/tap.sh"

if ! env -u LD_PRELOAD cpack -G DEB --config "$build/CPackConfig.cmake" -B "$w/pkg" >"$w/cpack.log" 2>&1; then
  notok "cpack -G DEB"
  sed 's/^/# /' "$w/cpack.log" | tail -20
  exit 1
fi
deb=$(find "$w/pkg" -maxdepth 1 -name 'leasejudge_*.deb' | head -1)
[ -n "$deb" ] && ok "cpack -G DEB makes $(basename "$deb")" || { notok "cpack -G DEB makes a .deb"; exit 1; }
version=$("$build/leasejudge" version)
same "its control: package leasejudge, the project's version, Depends computed" "leasejudge $version yes" \
  "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Depends | grep -q 'libc6' && echo yes)"

# The same files as cmake --install, under /usr.
env -u LD_PRELOAD cmake --install "$build" --prefix "$w/prefix" >"$w/install.log" 2>&1 || { notok "cmake --install"; exit 1; }
(cd "$w/prefix" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$w/installed"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort >"$w/packaged"
same "the package holds what cmake --install installs" "" "$(diff "$w/installed" "$w/packaged")"

# Unpacked into a scratch root (no configure: its scripts would run chrooted there).
root=$w/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
if dpkg --root="$root" --force-not-root --force-depends --unpack "$deb" >"$w/dpkg.log" 2>&1; then
  ok "dpkg --root unpacks it"
else
  notok "dpkg --root unpacks it"
  sed 's/^/# /' "$w/dpkg.log"
fi
same "dpkg --root lists it" "leasejudge $version" \
  "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Package} ${Version}' leasejudge 2>&1)"
out=$(env -i "$root/usr/bin/leasejudge" version)
same "the command runs from the scratch root" "0 $version" "$? $out"
out=$(env -i "$root/usr/bin/leasejudge" --help 2>&1)
same "its help lists the lock verbs" yes "$(grep -q '^  lock hold ' <<<"$out" && echo yes)"
same "it loads the library of the scratch root" yes \
  "$(ldd "$root/usr/bin/leasejudge" | grep -q "=> $root/usr/bin/../lib/libleasejudge.so.0 " && echo yes)"
if [ -f "$root/usr/lib/bash/leasejudge.so" ]; then
  same "the builtin loads from the scratch root" "$version" \
    "$(env -i bash -c "enable -f '$root/usr/lib/bash/leasejudge.so' leasejudge && leasejudge version" 2>&1)"
fi
# The Python package for Debian's python3: its modules in dist-packages (no library of
# its own), imported from the scratch root by Debian's python3, it finds the root's
# library next to its prefix. Its bytecode goes with it (prerm).
pyd=$root/usr/lib/python3/dist-packages
same "the Python package in dist-packages: its modules and py.typed" \
  "$(cd "$src/bindings/python/src/leasejudge" && ls -- *.py py.typed | LC_ALL=C sort | paste -sd' ')" \
  "$(cd "$pyd/leasejudge" 2>/dev/null && ls | LC_ALL=C sort | paste -sd' ')"
if [ -x /usr/bin/python3 ]; then
  same "Debian's python3 imports it from the scratch root; it loads the root's library" \
    "$pyd/leasejudge/__init__.py $root/usr/lib not_readable" \
    "$(env -i PYTHONPATH="$pyd" /usr/bin/python3 -B -c 'import os, leasejudge as lj, leasejudge._lib as L
print(lj.__file__, os.path.dirname(L.lib()._name), lj.judge_lock("[").reason.code)' 2>&1)"
else
  skip_or_fail "Debian's python3 is not installed"
fi
same "its prerm removes the bytecode python3 writes beside the package" yes \
  "$(dpkg-deb -I "$deb" prerm | grep -qxF 'rm -rf "/usr/lib/python3/dist-packages/leasejudge/__pycache__"' && echo yes)"
# The systemd unit of step watch, its ExecStart the installed command.
unit=$root/usr/lib/systemd/system/leasejudge-step-watch@.service
same "the unit is in place, its ExecStart /usr/bin/leasejudge" \
  "ExecStart=/usr/bin/leasejudge step watch --node %i --wait-for-store \$LEASEJUDGE_WATCH_OPTIONS" \
  "$(grep '^ExecStart=' "$unit" 2>&1)"
same "the man page and the completion are in place" "yes yes" \
  "$([ -s "$root/usr/share/man/man1/leasejudge.1" ] && echo yes) $([ -s "$root/usr/share/bash-completion/completions/leasejudge" ] && echo yes)"
same "its copyright file declares Apache-2.0 and points at the system's text" "Apache-2.0 yes" \
  "$(sed -n 's/^License: //p' "$root/usr/share/doc/leasejudge/copyright") $(grep -q '/usr/share/common-licenses/Apache-2.0' "$root/usr/share/doc/leasejudge/copyright" && echo yes)"

echo "1..$n"
[ "$failed" -eq 0 ]
