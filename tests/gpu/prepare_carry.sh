#!/usr/bin/env bash
# Run on the build machine before tests/gpu/run_h200.sh is sent to a GPU
# machine whose image lacks development files: copies the headers and the
# static libraries of sqlite3, json-c and zlib into .carry/ (ignored by git),
# which run_h200.sh builds against. Carry it with the run (carry: [".carry"]).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEST="$ROOT/.carry"
mkdir -p "$DEST/include" "$DEST/lib"
for h in sqlite3.h sqlite3ext.h zlib.h zconf.h; do
  src=$(ls /usr/include/$h /usr/include/*/$h 2>/dev/null | head -1)
  [ -n "$src" ] && cp "$src" "$DEST/include/" || echo "missing header: $h" >&2
done
[ -d /usr/include/json-c ] && cp -r /usr/include/json-c "$DEST/include/" || echo "missing headers: json-c/" >&2
for lib in libsqlite3.a libjson-c.a libz.a; do
  src=$(ls /usr/lib/*/$lib /usr/lib/$lib 2>/dev/null | head -1)
  [ -n "$src" ] && cp "$src" "$DEST/lib/" || echo "missing library: $lib (the GPU machine's own will be used)" >&2
done
du -sh "$DEST"
