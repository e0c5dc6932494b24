#!/bin/sh
# vision_net_hostile.sh VISION_NET_BINARY GRAPH.json: vision_net on damaged copies of a bundled
# graph (huge, fractional and NaN-like numbers, dangling and negative value ids, unknown ops,
# bad shapes, truncated JSON, a FIFO): each must end with exit status 1 and a message naming
# the problem, never with a crash, a hang or a result.
set -eu
bin=$1
graph=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$graph" "$tmp" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
w = base["ops"][0]["weight"]
def case(name, f):
    g = json.loads(json.dumps(base))
    f(g)
    json.dump(g, open(f"{sys.argv[2]}/{name}.json", "w"))
case("groups_huge", lambda g: g["ops"][0].__setitem__("groups", 1e300))
case("pad_fraction", lambda g: g["ops"][0].__setitem__("pad", [0.5, 1e40]))
case("input_id_huge", lambda g: g["ops"][2].__setitem__("inputs", [1e30]))
case("input_id_negative", lambda g: g["ops"][2].__setitem__("inputs", [-1]))
case("out_negative", lambda g: g["ops"][2].__setitem__("out", -5))
case("n_values_huge", lambda g: g.__setitem__("n_values", 1e20))
case("unknown_op", lambda g: g["ops"][3].__setitem__("op", "warp"))
case("shape_zero", lambda g: g["tensors"].__setitem__(w, [0, 3, 3, 3]))
case("shape_5d", lambda g: g["tensors"].__setitem__(w, [1, 1, 1, 1, 1]))
case("no_ops", lambda g: g.pop("ops"))
case("outputs_bad", lambda g: g.__setitem__("outputs", ["x"]))
open(f"{sys.argv[2]}/truncated.json", "w").write('{"ops": [')
open(f"{sys.argv[2]}/empty.json", "w").write("")
PY
mkfifo "$tmp/fifo.json" 2>/dev/null || true
bad=0
for f in "$tmp"/*.json; do
  rc=0
  timeout 60 "$bin" --backend cpu --graph "$f" --random-weights --batch 1 --size 16 \
    >"$tmp/out" 2>&1 </dev/null || rc=$?
  msg=$(grep "^vision_net: " "$tmp/out" | tail -1 || true)
  if [ "$rc" != 1 ] || [ -z "$msg" ]; then
    echo "FAIL $(basename "$f"): exit status $rc"
    cat "$tmp/out"
    bad=1
  else
    echo "ok $(basename "$f"): $msg"
  fi
done
exit $bad
