# The installed package: `cmake --install` into a
# temporary prefix, then a program (tests/install/scale.c) built against it
# through pkg-config (shared with ktune.pc, static with ktune-static.pc: no
# libktune.so in it) and through CMake's find_package(ktune) (ktune::ktune
# and ktune::ktune_static) and pkg_check_modules(ktune-static), each run; the
# prefix is then moved elsewhere and the pkg-config build done again, since
# ktune.pc names no absolute path. Also: json-c's include folder is not in
# the flags a user gets, and ktune(1) is installed.
. "$(dirname "$0")/common.bash"
BUILD=$(cd "$(dirname "$KTUNE")" && pwd)
[ -f "$BUILD/CMakeCache.txt" ] || { echo "skipped: $BUILD is not a CMake build"; exit 0; }
# A sanitizer build's library needs its flags in the program too.
FLAGS=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$BUILD/CMakeCache.txt")
[ "$(sed -n 's/^KTUNE_SANITIZE:BOOL=//p' "$BUILD/CMakeCache.txt")" = ON ] && FLAGS="$FLAGS -fsanitize=address,undefined"
P="$TMP/prefix"
cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log" >&2; fail "cmake --install"; finish; }
PC=$(find "$P" -name ktune.pc | head -1)
[ -n "$PC" ] || fail "no ktune.pc installed under the prefix"
[ -f "$P/share/man/man1/ktune.1" ] || fail "ktune(1) not installed in share/man/man1"
[ -x "$P/bin/ktune" ] || fail "the ktune command not installed in bin"
grep -q "$P" "$PC" && fail "ktune.pc names the install prefix $P: it must be relative to \${pcfiledir}"
grep -q /usr/local "$PC" && fail "ktune.pc names /usr/local"
SPC="$(dirname "$PC")/ktune-static.pc"
[ -f "$SPC" ] || fail "no ktune-static.pc beside ktune.pc"
grep -q "$P" "$SPC" && fail "ktune-static.pc names the install prefix $P"

# pc_build PREFIX: builds and runs the program against the ktune.pc under PREFIX.
pc_build() {
  pcdir=$(dirname "$(find "$1" -name ktune.pc | head -1)")
  cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags ktune) || { fail "pkg-config --cflags ktune"; return; }
  case " $cflags " in *json-c*) fail "pkg-config --cflags ktune gives json-c's folder to users: $cflags" ;; esac
  libs=$(PKG_CONFIG_PATH="$pcdir" pkg-config --libs ktune)
  # shellcheck disable=SC2086
  cc $FLAGS $cflags tests/install/scale.c -o "$TMP/scale_pc" $libs -Wl,-rpath,"$1/$(basename "$(dirname "$pcdir")")" \
    2>"$TMP/cc.log" || { cat "$TMP/cc.log" >&2; fail "cc with pkg-config's flags ($1)"; return; }
  "$TMP/scale_pc" >"$TMP/run.log" 2>&1 || { cat "$TMP/run.log" >&2; fail "the program built with pkg-config ($1)"; }
  # ktune-static.pc, with or without --static: the archive, never libktune.so.
  for how in "" --static; do
    static=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs $how ktune-static)
    # shellcheck disable=SC2086
    cc $FLAGS tests/install/scale.c -o "$TMP/scale_static" $static 2>"$TMP/cc.log" ||
      { cat "$TMP/cc.log" >&2; fail "static link with pkg-config $how ktune-static ($1)"; return; }
    readelf -d "$TMP/scale_static" | grep -q 'NEEDED.*libktune' &&
      fail "pkg-config $how --libs ktune-static linked libktune.so ($1)"
    "$TMP/scale_static" >"$TMP/run.log" 2>&1 || { cat "$TMP/run.log" >&2; fail "the static program ($1)"; }
  done
}
pc_build "$P"

# find_package(ktune), both targets.
cmake -S tests/install -B "$TMP/consumer" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$FLAGS" \
  >"$TMP/consumer.log" 2>&1 || { cat "$TMP/consumer.log" >&2; fail "find_package(ktune) from $P"; }
cmake --build "$TMP/consumer" >>"$TMP/consumer.log" 2>&1 || { tail -20 "$TMP/consumer.log" >&2; fail "building with ktune::"; }
for exe in scale_shared scale_static scale_pc_static; do
  "$TMP/consumer/$exe" >"$TMP/run.log" 2>&1 || { cat "$TMP/run.log" >&2; fail "$exe (find_package)"; }
done

# Moved: the same .pc still finds its header and library.
mv "$P" "$TMP/moved"
pc_build "$TMP/moved"
finish
