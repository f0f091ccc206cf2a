#!/usr/bin/env bash
# render-bench --scaling: one line per thread count with the documented
# fields, and its two derived figures computed from its own medians.
set -u
bench=$1 scene=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$bench" --scaling 1,2 --repeat 1 -r 32 24 "$scene") || fail "exit $?"
[ "$(wc -l <<<"$out")" = 2 ] || fail "expected two lines: $out"
re='^render-bench threads=([0-9]+) full_secs=([0-9.]+) bypass_secs=([0-9.]+) early_out_secs=([0-9.]+) intern_pct=(-?[0-9.]+) speedup=([0-9.]+)$'
first=
while read -r line; do
    [[ $line =~ $re ]] || fail "bad line: $line"
    t=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} b=${BASH_REMATCH[3]} e=${BASH_REMATCH[4]}
    pct=${BASH_REMATCH[5]} speedup=${BASH_REMATCH[6]}
    first=${first:-$f}
    # The printed figures are rounded; allow for that.
    awk -v f="$f" -v b="$b" -v e="$e" -v p="$pct" 'BEGIN {
        want = 100 * (b - e) / f; d = want - p; if (d < 0) d = -d
        exit !(d <= 0.01 + 100 * 0.0002 / f) }' || fail "-t $t: intern_pct $pct is not (B-E)/F"
    awk -v f1="$first" -v f="$f" -v s="$speedup" 'BEGIN {
        d = f1 / f - s; if (d < 0) d = -d; exit !(d <= 0.002 + 0.0002 / f) }' ||
        fail "-t $t: speedup $speedup is not $first / $f"
done <<<"$out"
grep -q '^render-bench threads=1 ' <<<"$out" && grep -q '^render-bench threads=2 ' <<<"$out" ||
    fail "thread counts out of order: $out"
"$bench" --scaling 0 "$scene" 2>/dev/null && fail "--scaling 0 accepted"
# Its own name, usage and version; "--name=value" as render takes it.
"$bench" --help | head -1 | grep -q '^usage: render-bench ' || fail "--help: $("$bench" --help | head -1)"
"$bench" --version | grep -q '^render-bench [0-9]' || fail "--version: $("$bench" --version)"
err=$("$bench" --no-such-option "$scene" 2>&1 >/dev/null) && fail "a bad option accepted"
[[ $err == "render-bench: "* ]] || fail "a bad option: '$err'"
out=$("$bench" --scaling=1 --repeat=1 -r 32 24 "$scene") || fail "--scaling=1: exit $?"
[[ $out == "render-bench threads=1 full_secs="* ]] || fail "--scaling=1: $out"
echo ok
