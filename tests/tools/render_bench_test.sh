#!/usr/bin/env bash
# render-bench --scaling: one line per thread count with the documented
# fields, each saying what its renders really ran.
set -u
bench=$1 scene=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
# "output": the plain run's one line instead (render_bench.output): exit 0,
# the whole line as documented, every rate above 0, and each ratio the
# eyelight rate over its yardstick's (to its three decimals).
if [ "${3:-}" = output ]; then
    out=$("$bench" -t 2 -r 32 24 --repeat 1 "$scene") || fail "exit $?"
    re='^render-bench threads=2 rays=768 raw_mrays=([0-9.]+) eyelight_mrays=([0-9.]+) ratio=([0-9.]+) raw8_mrays=([0-9.]+) ratio8=([0-9.]+)$'
    [[ $out =~ $re ]] || fail "bad line: $out"
    raw=${BASH_REMATCH[1]} eye=${BASH_REMATCH[2]} ratio=${BASH_REMATCH[3]}
    raw8=${BASH_REMATCH[4]} ratio8=${BASH_REMATCH[5]}
    awk -v r="$raw" -v e="$eye" -v q="$ratio" -v r8="$raw8" -v q8="$ratio8" 'BEGIN {
        ok = r > 0 && e > 0 && r8 > 0 && q > 0 && q8 > 0
        ok = ok && (q - e / r) ^ 2 < (0.0006 + 0.01 * q) ^ 2 && (q8 - e / r8) ^ 2 < (0.0006 + 0.01 * q8) ^ 2
        exit !ok }' || fail "rates and ratios disagree: $out"
    # Embree's loops trace one ray a pixel: another integrator, or more
    # samples, is a usage error, not a line that calls them eyelight's rays.
    for opt in "--spp 4" "--integrator path"; do
        # shellcheck disable=SC2086 # the option and its value, two words
        err=$("$bench" -t 1 -r 8 8 --repeat 1 $opt "$scene" 2>&1 >/dev/null) && fail "$opt: exit 0"
        [[ $err == "render-bench: against Embree's loops, the render is eyelight at --spp 1"* ]] ||
            fail "$opt: '$err'"
    done
    echo ok
    exit 0
fi
# Each line is one thread count's renders, as they reported themselves:
# the workers that ran and the string table's lock (not merely the options
# asked for), and render-bench stops on a render whose counts contradict its
# texture mode. More threads than cores here (3 on 2): still 3 workers.
check() { # lock threads... : render-bench's lines for those thread counts
    local lock=$1
    shift
    local list out line t want=("$@")
    list=$(IFS=,; echo "$*")
    out=$("$bench" --scaling "$list" --repeat 1 -r 32 24 ${lock:+--ustring-lock "$lock"} "$scene") ||
        fail "--scaling $list ${lock:+(lock $lock)}: exit $?"
    [ "$(wc -l <<<"$out")" = $# ] || fail "expected $# lines: $out"
    re='^render-bench threads=([0-9]+) full_secs=([0-9.]+) bypass_secs=([0-9.]+) early_out_secs=([0-9.]+) intern_pct=(-?[0-9.]+) speedup=([0-9.]+) workers=([0-9]+) lock=([a-z]+) intern_pct_min=(-?[0-9.]+) intern_pct_max=(-?[0-9.]+)$'
    local i=0
    while read -r line; do
        [[ $line =~ $re ]] || fail "bad line: $line"
        t=${BASH_REMATCH[1]}
        [ "$t" = "${want[$i]}" ] || fail "line $i is -t $t, want -t ${want[$i]}: $out"
        [ "${BASH_REMATCH[7]}" = "$t" ] || fail "-t $t ran ${BASH_REMATCH[7]} workers: $line"
        [ "${BASH_REMATCH[8]}" = "${lock:-lockfree}" ] ||
            fail "-t $t: the table's lock is ${BASH_REMATCH[8]}, want ${lock:-lockfree}: $line"
        for v in "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}"; do
            awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "-t $t: a time of 0: $line"
        done
        # One round: its spread is its figure.
        [ "${BASH_REMATCH[9]}" = "${BASH_REMATCH[5]}" ] && [ "${BASH_REMATCH[10]}" = "${BASH_REMATCH[5]}" ] ||
            fail "-t $t: one round's min and max are not its intern_pct: $line"
        # The speed-up is against the first thread count listed.
        [ $i -gt 0 ] || [ "${BASH_REMATCH[6]}" = 1.000 ] || fail "first line's speedup: $line"
        [ $i -gt 0 ] || f0=${BASH_REMATCH[2]}
        # Both figures from this line's times (one round: the figures are
        # that round's), within what their four decimals allow: intern_pct
        # 100 (bypass - early-out) / full, speedup the first full over this.
        awk -v f0="$f0" -v f="${BASH_REMATCH[2]}" -v b="${BASH_REMATCH[3]}" -v e="${BASH_REMATCH[4]}" \
            -v pct="${BASH_REMATCH[5]}" -v up="${BASH_REMATCH[6]}" 'BEGIN { h = 0.00005
            if (f <= 2 * h || f0 <= 2 * h) exit 0
            p_lo = 100 * (b - e - 2 * h) / (b - e - 2 * h < 0 ? f - h : f + h) - 0.01
            p_hi = 100 * (b - e + 2 * h) / (b - e + 2 * h < 0 ? f + h : f - h) + 0.01
            s_lo = (f0 - h) / (f + h) - 0.001; s_hi = (f0 + h) / (f - h) + 0.001
            exit !(pct >= p_lo && pct <= p_hi && up >= s_lo && up <= s_hi) }' ||
            fail "-t $t: intern_pct or speedup not from the times: $line"
        i=$((i + 1))
    done <<<"$out"
}
check "" 1 2
check mutex 3 1
check rwspin 2
"$bench" --scaling 0 "$scene" 2>/dev/null && fail "--scaling 0 accepted"
# Its own name, usage and version; "--name=value" as render takes it.
"$bench" --help | head -1 | grep -q '^usage: render-bench ' || fail "--help: $("$bench" --help | head -1)"
"$bench" --version | grep -q '^render-bench [0-9]' || fail "--version: $("$bench" --version)"
err=$("$bench" --no-such-option "$scene" 2>&1 >/dev/null) && fail "a bad option accepted"
[[ $err == "render-bench: "* ]] || fail "a bad option: '$err'"
out=$("$bench" --scaling=1 --repeat=1 -r 32 24 "$scene") || fail "--scaling=1: exit $?"
[[ $out == "render-bench threads=1 full_secs="* ]] || fail "--scaling=1: $out"
echo ok
