#!/bin/sh
# tools/abi_check.sh LIB [--update]: libnnop's ABI against the one recorded in abi/libnnop.abi
# (issue 50), so that a break is a decision, not an accident. LIB is a libnnop.so built with
# debug information (the default RelWithDebInfo; CI uses its CPU-only build). abidw (Debian:
# abigail-tools) dumps LIB's public functions and the types they reach; abidiff compares the
# dump with the record. Any removed or changed function, or a change to a type declared in a
# public header (a struct's size or fields, an enum's values), fails; added functions pass
# (they break no binary) and are listed. Opaque types (nnop_graph, nnop_plan, ...) are defined
# in src/ and may change freely: abi/nnop.supp suppresses every type defined outside
# include/nnop. --update writes LIB's dump as the new record: do it in the commit that
# changes the ABI on purpose, and say so there (a 0.x minor may: the SONAME carries it).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=${1:?usage: tools/abi_check.sh LIB [--update]}
RECORD="$ROOT/abi/libnnop.abi"
if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
    echo "abi_check: abidw and abidiff are needed (Debian: apt-get install abigail-tools)" >&2
    exit 2
fi
NOW=$(mktemp)
trap 'rm -f "$NOW"' EXIT
abidw --headers-dir "$ROOT/include/nnop" --no-corpus-path --short-locs "$LIB" >"$NOW"
if [ "${2:-}" = "--update" ]; then
    cp "$NOW" "$RECORD"
    echo "abi_check: $RECORD now records $LIB"
    exit 0
fi
rc=0
abidiff --suppressions "$ROOT/abi/nnop.supp" "$RECORD" "$NOW" || rc=$?
# abidiff's status is a bit set: 1 error, 2 usage, 4 an ABI change, 8 an incompatible one.
# Added functions alone set 4 too: count only what the report calls removed or changed.
if [ $((rc & 3)) -ne 0 ]; then
    echo "abi_check: abidiff failed (status $rc)" >&2
    exit 1
fi
if [ $((rc & 12)) -ne 0 ] &&
    abidiff --no-added-syms --suppressions "$ROOT/abi/nnop.supp" "$RECORD" "$NOW" >/dev/null; then
    echo "abi_check: functions added, nothing removed or changed"
    exit 0
fi
if [ $((rc & 12)) -ne 0 ]; then
    echo "abi_check: $LIB changes the ABI recorded in abi/libnnop.abi (above). If that is" \
        "meant, run tools/abi_check.sh $LIB --update and say why in the commit." >&2
    exit 1
fi
echo "abi_check: $LIB has the ABI recorded in abi/libnnop.abi"
