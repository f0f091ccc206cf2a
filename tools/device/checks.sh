#!/usr/bin/env bash
# checks.sh: the many-core checks of issues 30 and 33 in one command, for a
# machine lent for minutes (../shared/device/README.md). Bundle the programs
# (tools/device/stage.sh, then bundle.sh) and run it there through the
# bundle's run.sh, which puts the programs on PATH and the scenes in $S:
#
#   bash .devrun/run.sh bash "$PWD/tools/device/checks.sh" --budget 540 "$OUT"
#
# Each step writes NN-name.txt in the output folder (the last argument) and
# adds its figures to summary.txt there, so that a run cut short still says
# what it measured; a figure that could not be read shows as "?". The quick
# checks come first; the long study comes last and stops itself at the
# deadline (--budget seconds from the start; study --deadline) as Ctrl-C
# would stop it: its running render finishes and what it measured is
# written, marked incomplete; 20 s on, that render is stopped too.
#
#   01 the hot intern at 1 and N threads, 5M operations a thread (issue 33, 2)
#   02 the intern floor, and its speed-up at N threads: the ceiling (issue 33, 2)
#   03 every lock on every --scale workload at 1..N threads (issue 33, 3)
#   04 the study's render_secs against standalone renders (issue 30, 1)
#   05 --open-textures lazy against upfront at N threads (issue 30, 4)
#   06 the default lock's study of many-textures, every mode (issue 30, 2, 3, 5)
#   07 the seed's shape: mutex, rwspin and the default, full render (issue 30, 5)
#
# N is the machine's processor count. --steps runs some of them (07 again,
# say, if the deadline cut it short). The default study's work grows until
# its fastest row takes 100 ms, so on 16 cores a 1-thread row takes tens of
# seconds: 01-05 take about 2 minutes there, 06 about 5, 07 about 1.
# --quick shrinks every step to a smoke run
# (tests/tools/device_checks_test.sh runs it so).
set -uo pipefail

usage() {
    echo "usage: checks.sh [--quick] [--budget SECS] [--steps 01,...] OUT_DIR" \
        "(\$S: the scenes; programs on PATH)" >&2
    exit 2
}
quick=0 budget=480 steps=01,02,03,04,05,06,07
while [ $# -gt 1 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --budget) budget=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
[[ $budget =~ ^[0-9]+$ ]] || { echo "checks.sh: --budget '$budget' is not a number of seconds" >&2; exit 2; }
out=$1
mkdir -p "$out" || exit 1
: "${S:?checks.sh: \$S must name the scenes folder (run.sh sets it)}"
scene=$S/many-textures/many-textures.gltf
[ -f "$scene" ] || { echo "checks.sh: no $scene" >&2; exit 1; }
for p in ustring-bench study render; do
    command -v "$p" >/dev/null || { echo "checks.sh: $p is not on PATH" >&2; exit 1; }
done
start=$SECONDS
n=$(nproc)
render=$(command -v render) # the one every step times, the studies' included
img=$(mktemp -d) || exit 1  # the renders' images: not worth carrying back
trap 'rm -rf "$img"' EXIT
summary=$out/summary.txt
say() { echo "$*" | tee -a "$summary"; }
# Thread counts as a list without repeats (a 1-CPU machine's "1,N" is "1").
counts() { printf '%s\n' "$@" | sort -nu | paste -sd,; }

if [ $quick = 1 ]; then
    hot_ops=20000 scale_ops=5000 repeat=1 size=(-r 64 48) scale_threads=$(counts 1 $n)
    study_threads=$(counts 1 $n) study_extra=(--quick)
else
    hot_ops=5000000 scale_ops=200000 repeat=3 size=(-r 960 720)
    scale_threads=$(counts 1 2 4 8 $n) study_threads=$(counts 1 2 4 8 $n $((2 * n)))
    study_extra=()
fi
# The default lock's name, as the programs print it.
lock=$(ustring-bench --threads 1 --ops 1 --repeat 1 2>/dev/null |
    sed -n 's/^ustring-bench lock=\([a-z]*\) .*/\1/p' | head -1)
lock=${lock:-?}

: >"$summary"
say "checks.sh: $n processors, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ), budget ${budget}s$([ $quick = 1 ] && echo ', quick')," \
    "default lock $lock, render $render"

# The Mops of `lock` at `threads` in an ustring-bench output; "?" if none.
mops() {
    awk -v l="lock=$2" -v t="threads=$3" '$1 == "ustring-bench" && $2 == l && $3 == t {
        sub("mops=", "", $6); m = $6; exit } END { print m == "" ? "?" : m }' "$1"
}
# The render seconds in a `render --stats` output, and the share on a CPU; "?" if none.
render_secs() { sed -n 's/.*time: .* render \([0-9.]*\) s$/\1/p' "$1" | grep . || echo '?'; }
on_cpu() { sed -n 's/.*on a CPU \([0-9]*\)% of it.*/\1%/p' "$1" | grep . || echo '?'; }
# The median of numbers, one a line ("?" lines left out); "?" if none.
median() {
    grep -v '?' | sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "?" }'
}

# 01: the hot micro-benchmark, the default lock.
step_01() {
    local f=$out/01-ustring-hot.txt one all
    ustring-bench --threads "$(counts 1 $n)" --ops $hot_ops --repeat $repeat >"$f" 2>&1
    one=$(mops "$f" "$lock" 1) all=$(mops "$f" "$lock" $n)
    say "01 hot intern: $one Mops at 1 thread, $all at $n:" \
        "$(awk -v a="$all" -v b="$one" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "?" }')" \
        "(issue 33: >= 15x at 16)"
    late_say 01 "$f"
}

# The bench's warnings that a line's threads did not run side by side
# (waiting for a CPU, or started late: tool_late_warn()): such a line's
# figure is not the lock's scaling, and the summary must say so.
late_say() {
    local n_late
    n_late=$(grep -c ': warning: .* not side by side' "$2")
    [ "$n_late" = 0 ] || say "$1   $n_late lines whose threads did not run side by side:" \
        "$(grep -o 'warning: [0-9]* threads*, [a-z]*' "$2" | sed 's/warning: //' | tr '\n' ';')"
}

# 02: the floor for a hot intern, and its speed-up at N threads: the same
# lookups with nothing shared written, the most this machine gives (its
# clocks may drop as cores wake), beside the table's at N, with the 01
# step's 5M a thread.
step_02() {
    local f=$out/02-ustring-floor.txt figures top=$((n > 2 ? n : 2))
    ustring-bench --floor --threads "$(counts 2 $top)" --ops $hot_ops --repeat $((repeat + 2)) \
        >"$f" 2>&1
    figures=$(grep -o 'ratio=[^ ]* spread=[^ ]* speedup2=[^ ]*' "$f" | head -1)
    say "02 intern floor: ${figures:-?} (issue 33: ratio <= 1.25, speedup2 >= 1.9)"
    figures=$(grep -o "speedup$top=[^ ]* floor_speedup$top=[^ ]*" "$f" | head -1)
    say "02 at $top threads: ${figures:-?} (the floor's: the ceiling for 01's 15x)"
}

# 03: every lock on every workload; where the default is not the fastest.
step_03() {
    local f=$out/03-ustring-scale.txt verdict
    ustring-bench --scale --lock all --threads "$scale_threads" --ops $scale_ops --repeat $repeat \
        >"$f" 2>&1
    verdict=$(awk -v ours="$lock" '
        /^# workload=/ { w = $0; sub(/^# workload=/, "", w); sub(/ new-fraction.*/, "", w) }
        $1 == "ustring-bench" { split($2, l, "="); split($3, t, "="); m = $6; sub("mops=", "", m)
            key = w " at " t[2]; rows++
            if (l[2] == ours) mine[key] = m + 0
            else if (m + 0 > best[key]) { best[key] = m + 0; who[key] = l[2] } }
        END { for (k in best) if (!(k in mine)) { print "?"; exit }
              if (!rows) { print "?"; exit }
              for (k in mine) if (mine[k] < best[k])
                  s = s sprintf("%s: %.2f < %s %.2f; ", k, mine[k], who[k], best[k])
              print s == "" ? "the default is the fastest on every workload at every thread count" : s }' "$f")
    say "03 locks: $verdict (issue 33: never slower)"
    # The bench's own verdict per workload: the default over the fastest other lock, with
    # the range of the rounds' ratios (the locks' runs interleave round by round).
    awk '/^# workload=/ { w = $0; sub(/^# workload=/, "", w); sub(/ new-fraction.*/, "", w) }
        /^default / { sub(/^.*range\): /, ""); print "03   " w ": " $0 }' "$f" | tee -a "$summary"
    late_say 03 "$f"
}

# 04: the study's time against standalone renders of the same options.
step_04() {
    local f=$out/04-agree.txt t r runs in_study
    study "$scene" --render "$render" --threads "$(counts 1 $n)" --locks default --modes full \
        --repeat $repeat --integrator eyelight "${size[@]}" --out "$out/04-agree" >"$f" 2>&1
    for t in $(counts 1 $n | tr , ' '); do
        runs=
        for r in $(seq $repeat); do
            "$render" -t $t --integrator eyelight "${size[@]}" --stats -o "$img/04.png" "$scene" \
                >"$out/04-t$t-$r.txt" 2>&1
            runs="$runs $(render_secs "$out/04-t$t-$r.txt")"
        done
        in_study=$(awk -F, -v t=$t 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["threads"] == t { print $c["render_secs"] }' "$out/04-agree.csv" 2>/dev/null | median)
        say "04 -t $t: study $in_study s, standalone $(tr ' ' '\n' <<<"$runs" | grep . | median) s" \
            "(runs:$runs) (issue 30: agree within the spread, or 5%)"
    done
}

# 05: lazy opening against upfront at N threads, alternating.
step_05() {
    local r o secs cpu
    for r in $(seq $repeat); do
        for o in upfront lazy; do
            "$render" -t $n --integrator eyelight "${size[@]}" --open-textures $o --stats \
                -o "$img/05.png" "$scene" >"$out/05-$o-$r.txt" 2>&1
        done
    done
    for o in upfront lazy; do
        secs=$(for r in $(seq $repeat); do render_secs "$out/05-$o-$r.txt"; done | median)
        cpu=$(for r in $(seq $repeat); do on_cpu "$out/05-$o-$r.txt"; done | paste -sd' ')
        say "05 -t $n --open-textures $o: $secs s, on a CPU $cpu (issue 30: lazy within 10%, >= 90%)"
    done
}

# Runs study with the given options into $out/NAME.*, stopped at the
# deadline by the study itself (--deadline: the seconds left of the budget;
# as Ctrl-C would: the running render finishes, what was measured is
# written, marked incomplete, exit 130; 20 s on, that render is stopped
# too); says how it ended, its flagged rows and its size. timeout is the
# net under that, for a study that does not stop: 15 s after the grace,
# well inside the lent machine's limit on a command, and the render the
# study was running (a process group of its own, which the study's death
# does not reach) is ended with it.
study_until_deadline() {
    local step=$1 name=$2 f=$out/$2.txt left status note= grace=20
    shift 2
    rm -f "$out/$name".{csv,json,png} # a rerun's "no files" must not find the last run's
    left=$((budget - (SECONDS - start)))
    ((left > 0)) || left=0
    timeout -s KILL $((left + grace + 15)) study "$scene" --render "$render" --integrator eyelight \
        "$@" --deadline $left --grace $grace --out "$out/$name" >"$f" 2>&1
    status=$?
    [ $status = 130 ] && note=' (stopped at the budget: incomplete)'
    [ $status = 130 ] && [ ! -s "$out/$name.json" ] && note=' (stopped at the budget: no files)'
    if [ $status = 137 ]; then
        note=' (killed: SIGKILL, the net past the budget or the kernel out of memory)'
        pkill -KILL -f -- "$out/$name.run.tmp" # its render
    fi
    say "$step study: exit $status$note, $(grep -c 'under 10 ms' "$f") rows under 10 ms" \
        "(issue 30: none), $(grep -c 'the threads waited' "$f") rows flagged for waiting"
    # The size the study chose ("work: ... scaled to ..."), or the one it was given.
    say "$step   $(grep -m1 '^work:' "$f" || { grep -m1 '^options:' "$f" | cut -d, -f1; })"
}

# The -tN row of a study's table "MODE, lock LOCK" in file $2, for step $1.
row_at_n() {
    awk -v t="-t$n" -v head="$3" -v step="$1" 'index($0, head " ") == 1 { on = 1; next }
        /^$/ { on = 0 } on && $1 == t { print step "   " head ", " $0 }' "$2" | tee -a "$summary"
}

# 06: the default lock's study, every mode (issue 30: the work's size, the
# rows' waiting, 90% of light speed at N).
step_06() {
    study_until_deadline 06 06-study --threads "$study_threads" --locks default \
        "${study_extra[@]}"
    row_at_n 06 "$out/06-study.txt" "full, lock $lock"
}

# 07: the seed's shape, mutex and rwspin against the default, the full
# render only. Its fastest row is a full render, so the study sizes its
# work to that: far smaller than 06's, sized by early-out.
step_07() {
    study_until_deadline 07 07-locks --threads "$(counts 1 4 $n)" --locks mutex,rwspin,default \
        --modes full "${study_extra[@]}"
    local l
    for l in mutex rwspin $lock; do
        row_at_n 07 "$out/07-locks.txt" "full, lock $l"
    done
}

for s in ${steps//,/ }; do
    declare -F "step_$s" >/dev/null || { echo "checks.sh: no step '$s' (01 to 07)" >&2; exit 2; }
    "step_$s"
done
say "checks.sh: done in $((SECONDS - start)) s"
