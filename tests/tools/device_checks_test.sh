#!/usr/bin/env bash
# tools/device/checks.sh, the many-core checks a lent machine runs in one
# command, as a smoke run here (--quick): every step runs and reports a
# figure, so that minutes on that machine are not lost to a broken script.
# Usage: device_checks_test.sh CHECKS_SH RENDER STUDY USTRING_BENCH SCENES_DIR
set -euo pipefail
checks=$1 scenes=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "device_checks: $*" >&2
    exit 1
}
mkdir "$tmp/bin"
ln -s "$2" "$tmp/bin/render" && ln -s "$3" "$tmp/bin/study" && ln -s "$4" "$tmp/bin/ustring-bench"
PATH=$tmp/bin:$PATH S=$scenes bash "$checks" --quick --budget 120 "$tmp/out" >"$tmp/log" 2>&1 ||
    fail "exit $?: $(tail -5 "$tmp/log")"
sum=$tmp/out/summary.txt
# Every step's line, each with its figures (a "?" is a figure not found).
for step in 01 02 03 04 05 06 07; do
    grep -q "^$step " "$sum" || fail "no step $step in the summary: $(cat "$sum")"
done
! grep -q '?' "$sum" || fail "a figure missing: $(grep '?' "$sum")"
grep -qE '^01 hot intern: [0-9.]+ Mops at 1 thread, [0-9.]+ at [0-9]+: [0-9.]+x' "$sum" ||
    fail "01: $(grep '^01' "$sum")"
grep -qE '^02 intern floor: ratio=[0-9.]+ ' "$sum" || fail "02: $(grep '^02' "$sum")"
grep -qE '^02 at [0-9]+ threads: speedup([0-9]+)=[0-9.]+ floor_speedup\1=[0-9.]+ ' "$sum" ||
    fail "02: no ceiling: $(grep '^02' "$sum")"
[ "$(grep -cE '^04 -t [0-9]+: study [0-9.]+ s, standalone [0-9.]+ s' "$sum")" = 2 ] ||
    fail "04: $(grep '^04' "$sum")"
[ "$(grep -cE '^05 -t [0-9]+ --open-textures (upfront|lazy): [0-9.]+ s, on a CPU [0-9]+%' "$sum")" = 2 ] ||
    fail "05: $(grep '^05' "$sum")"
grep -qE '^06 study: exit 0, [0-9]+ rows under 10 ms' "$sum" || fail "06: $(grep '^06' "$sum")"
grep -qE '^06   full, lock [a-z]+, +-t[0-9]+ ' "$sum" || fail "06: no full row of the default lock"
grep -qE '^03 locks: [a-z0-9]' "$sum" || fail "03: $(grep '^03' "$sum")"
[ "$(grep -cE '^03   [^:]+: 1 thread [0-9.]+x [a-z]+ \([0-9.]+-[0-9.]+\)' "$sum")" = 4 ] ||
    fail "03: not the default's verdict for each of the four workloads: $(grep '^03' "$sum")"
[ "$(grep -cE '^07   full, lock [a-z]+, +-t[0-9]+ ' "$sum")" = 3 ] ||
    fail "07: not a row for each of mutex, rwspin and the default: $(grep '^07' "$sum")"
grep -qE "^06   (work|options): [0-9]+x[0-9]+ " "$sum" || fail "06: no work size"
# The study's files, and nothing heavy: no rendered image comes back.
[ -s "$tmp/out/06-study.json" ] && [ -s "$tmp/out/04-agree.csv" ] || fail "no study files"
[ -z "$(find "$tmp/out" -name '04-t*.png' -o -name '05-*.png')" ] || fail "render images left in the output"

# The deadline: the study stops itself as Ctrl-C would stop it (study
# --deadline, given what is left of the budget), and what it measured is
# written, marked incomplete. A budget of 0 is the worst case: the
# deadline has passed when the study starts. (checks.sh once sent the
# Ctrl-C itself, and one sent in the instant between fork and exec ended
# the study with no files: a CI run under load.)
PATH=$tmp/bin:$PATH S=$scenes bash "$checks" --quick --steps 06 --budget 0 "$tmp/late" \
    >"$tmp/late.log" 2>&1 || fail "deadline run: exit $?: $(tail -3 "$tmp/late.log")"
grep -q '^06 study: exit 130 (stopped at the budget: incomplete)' "$tmp/late/summary.txt" ||
    fail "deadline: $(cat "$tmp/late/summary.txt")"
[ "$(jq .complete "$tmp/late/06-study.json")" = false ] || fail "deadline: the study's JSON"
! grep -q '^0[1-57] ' "$tmp/late/summary.txt" || fail "--steps 06 ran other steps"
echo "device_checks: $(wc -l <"$sum") summary lines; the deadline stops the study"
