# The peer benchmark (bench/peers) reads the annotations itself to give
# Kernel Tuner and its re-measurement the same spaces as ktune: for every
# shipped CUDA kernel, its names, choices, default, launch shape of the
# default and the number of valid configurations must be ktune's, and its
# @cluster names (bound at their defaults while the @autotune stage is
# checked, as ktune does) too.
. "$(dirname "$0")/common.bash"

for f in kernels/cuda/*.cu; do
  run_status 0 "$KTUNE" space "$f" --json
  cp "$TMP/out" "$TMP/space.json"
  python3 - "$f" "$TMP/space.json" >"$TMP/cmp" 2>&1 <<'PY' || { fail "$f: annot.py disagrees with ktune space"; cat "$TMP/cmp" >&2; }
import json, sys
sys.path.insert(0, "bench/peers")
import annot
k = annot.load(sys.argv[1])
d = json.load(open(sys.argv[2]))
ours = {n: v for n, v in k.params.items()}
theirs = {x["name"]: x["choices"] for x in d["dims"]}
assert ours == theirs, (ours, theirs)
ours_c = dict(k.cluster)
theirs_c = {x["name"]: x["choices"] for x in d.get("cluster_dims", [])}
assert ours_c == theirs_c, (ours_c, theirs_c)
assert k.default() == d["default"], (k.default(), d["default"])
n = sum(1 for _ in k.space())
assert n == d["valid_size"], (n, d["valid_size"])
g, b = k.launch(k.default())
assert all(v >= 1 for v in g + b), (g, b)
PY
done
finish
