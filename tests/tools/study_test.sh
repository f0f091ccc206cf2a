#!/usr/bin/env bash
# study: a --quick study of a tiny scene gives its tables and its three
# files (the CSV one row per run with the documented columns, the JSON with
# the mode accounting right, a PNG); bad input gives one clear line, a
# non-zero exit, and no files.
set -u
study=$1 texgen=$2 case_=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/../progress_wait.sh"
# Every row of a study's CSV ($1) is what the render itself reported: as
# many workers ran as the row's thread count says, and the string table had
# the row's lock (not merely the options' asking for them); $2: the thread
# counts and locks the rows must cover, as "threads:lock ...".
rows_honest() {
    awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { if ($col["workers"] != $col["threads"] || $col["table_lock"] != $col["lock"])
              bad = bad " row" NR "(" $col["threads"] "/" $col["workers"] " " $col["lock"] "/" $col["table_lock"] ")"
          seen[$col["threads"] ":" $col["lock"]]++ }
        END { n = split(want, w, " "); for (i = 1; i <= n; i++) if (!seen[w[i]]) bad = bad " none:" w[i]
              for (k in seen) { found = 0; for (i = 1; i <= n; i++) found += k == w[i]; if (!found) bad = bad " extra:" k }
              if (bad) { print "rows" bad; exit 1 } }' "$1"
}
# A study with --out $1 whose one render was stopped: no row, nothing of
# the render left behind, and no render outliving the study.
stopped_clean() {
    [ "$(wc -l <"$1.csv")" = 1 ] || fail "a row of a stopped render: $(cat "$1.csv")"
    [ -z "$(ls "$1".run.* 2>/dev/null)" ] || fail "left $(ls "$1".run.*)"
    for d in /proc/[0-9]*; do
        [[ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" == *"$1.run.tmp.exr"* ]] &&
            fail "a render outlived the study: ${d#/proc/}"
    done
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$texgen" --count 1 --size 32 "$tmp/tex" >/dev/null || fail texgen
printf 'newmtl t\nKd 1 1 1\nmap_Kd tex/tex00.png\n' >"$tmp/s.mtl"
printf 'mtllib s.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl t\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\n' \
    >"$tmp/s.obj"
cd "$tmp" || exit 1

case $case_ in
quick)
    # A quote in the prefix: the files, and gnuplot's script, must cope.
    q="q's"
    out=$("$study" --quick --locks default,mutex --out "$q" s.obj 2>/dev/null) || fail "exit $?"
    for want in "machine: " "command: " "version: study " "cpu: " "options: 64x48 pixels, spp 16" "max_memory_mb 1024," \
        "full, lock lockfree" "bypass, lock mutex" "early-out, lock lockfree" "% of light speed" \
        "speed-up" "expected" "locks side by side, full (ms)" "model: Universal Scalability Law" \
        "-t2" "verdict" "full at -t2: " "interning cost (bypass - early-out, the median over rounds"; do
        grep -qF -- "$want" <<<"$out" || fail "no '$want' in the output: $out"
    done
    # The command as a shell takes it back: the quote in the prefix escaped.
    grep -qF -- "command: $study --quick --locks default,mutex --out 'q'\''s' s.obj" <<<"$out" ||
        fail "command line: $(grep '^command:' <<<"$out")"
    # Times in the unit that fits them: a 64x48 render takes milliseconds.
    grep -qE -- "^  -t1 +[0-9]+\.[0-9]{2} ms +1\.00x +100%" <<<"$out" || fail "no -t1 row in ms: $out"
    # The verdict names, per mode, the faster lock and its ratio over the
    # other, as the JSON's verdict says with the two medians.
    line=$(grep '^  full at -t2: ' <<<"$out")
    best=$(sed -n 's/^  full at -t2: \([a-z]*\) is \([0-9.]*\)x \([a-z]*\) (one run each: no spread to judge by)$/\1 \2 \3/p' <<<"$line")
    [ -n "$best" ] || fail "verdict line: $line"
    read -r b ratio other <<<"$best"
    jline=$(jq -c '.verdict.modes[] | select(.mode == "full" and .threads == 2)' "$q.json")
    [ -n "$jline" ] || fail "no full verdict in $q.json"
    jq -e --arg b "$b" --arg o "$other" --argjson r "$ratio" '.secs[$b] as $sb | .secs[$o] as $so |
        $sb > 0 and $so >= $sb and ($so / $sb - $r | fabs) < 0.006' <<<"$jline" >/dev/null ||
        fail "verdict $line against $jline"
    # ... and those medians are the runs' own (one render each here): each
    # lock's full -t2 render in the JSON's runs.
    jq -e '([.runs[] | select(.mode == "full" and .threads == 2) | {(.lock): .render_secs}] | add)
        as $runs | .verdict.modes[] | select(.mode == "full" and .threads == 2) | .secs as $v |
        ($v | keys) == ($runs | keys) and all($v | keys[]; $v[.] == $runs[.])' "$q.json" >/dev/null ||
        fail "the verdict's full -t2 times are not the runs': $(jq -c .verdict "$q.json")"
    # The table's -t2 row of full, lock lockfree: the run's time, and the
    # speed-up -t1's over it.
    t1=$(jq '.runs[] | select(.mode == "full" and .lock == "lockfree" and .threads == 1) | .render_secs' "$q.json")
    t2=$(jq '.runs[] | select(.mode == "full" and .lock == "lockfree" and .threads == 2) | .render_secs' "$q.json")
    row=$(sed -n '/^full, lock lockfree/,/^$/s/^  -t2 \+\([0-9.]*\) ms \+\([0-9.]*\)x .*/\1 \2/p' <<<"$out")
    awk -v r="$row" -v t1="$t1" -v t2="$t2" 'BEGIN { split(r, f, " ");
        exit !(f[1] != "" && (f[1] - t2 * 1000) ^ 2 < 0.005 ^ 2 * 4 && (f[2] - t1 / t2) ^ 2 < 0.006 ^ 2) }' ||
        fail "full, lock lockfree -t2 row '$row', the runs' -t1 $t1 s and -t2 $t2 s"
    jq -e '(.provenance.command | type) == "string" and (.provenance.version | type) == "string" and
        (.provenance.date | startswith("20")) and (.provenance.cpu_model | type) == "string" and
        .provenance.options.width == 64 and .provenance.options.height == 48 and
        .provenance.options.spp == 16 and .verdict.ranks == 1 and (.verdict.interning | type) == "array"' \
        "$q.json" >/dev/null || fail "$q.json lacks the provenance or the verdict: $(head -c 600 "$q.json")"
    [ -s "$q.csv" ] && [ -s "$q.json" ] || fail "no CSV or JSON"
    [ "$(head -c 8 "$q.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$q.png is not a PNG"
    # Each full table's last line: the share of the workers' time spent
    # opening textures, per thread count, the runs' own tex_open_us over their
    # busy_secs (one run each here: to the percent printed), the workers'
    # alone: render's open_secs, not the texture system's open_us, which
    # counts opens before the workers start too (an --envmap's).
    line=$(grep -m1 "^  opening textures (decoding, MIP levels, first tiles), of the workers' time: " <<<"$out") ||
        fail "no opening line: $out"
    for t in 1 2; do
        got=$(sed -nE "s/.* -t$t ([0-9]+)%.*/\1/p" <<<"$line")
        want=$(jq -r --argjson t "$t" '.runs[] | select(.mode == "full" and .lock == "lockfree" and .threads == $t) |
            (.open_secs / .busy_secs * 100 | round)' "$q.json")
        [ -n "$got" ] && [ "$got" = "$want" ] || fail "-t$t opening $got%, the run's $want%: $line"
    done
    [ "$want" -gt 0 ] || fail "no time opening textures: $line"
    # One row per run: 2 threads x 3 modes x 2 locks, repeat 1; the columns.
    [ "$(wc -l <"$q.csv")" = 13 ] || fail "$q.csv has $(wc -l <"$q.csv") lines, want 13"
    head -1 "$q.csv" | grep -q '^round,mode,lock,threads,workers,table_lock,render_secs,.*,lookups,interns,bypasses,early_outs,.*tex_tiles_loaded' ||
        fail "$q.csv header: $(head -1 "$q.csv")"
    [ -z "$(ls ./*.tmp 2>/dev/null)" ] || fail "temporary files left"
    rows_honest "$q.csv" "1:lockfree 2:lockfree 1:mutex 2:mutex" || fail "$q.csv: --threads, --locks"
    # Mode accounting, from the CSV's columns: full interns every lookup,
    # bypass interns every slot and brings no tile in (read or kept by a
    # decode), early-out interns none.
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { m = $col["mode"]; l = $col["lookups"]; n = $col["interns"]; b = $col["bypasses"]
          t = $col["tex_tiles_loaded"] + $col["tex_tiles_kept"]
          if (m == "full" && !(l > 0 && n == l && t > 0)) bad = bad " full:" NR
          if (m == "bypass" && !(l == 0 && n == b && n > 0 && t == 0)) bad = bad " bypass:" NR
          if (m == "early-out" && !(n == 0 && t == 0)) bad = bad " early-out:" NR }
        END { if (bad) { print "rows" bad; exit 1 } }' "$q.csv" || fail "mode accounting"
    [ "$(jq '.complete' "$q.json")" = true ] && [ "$(jq '.runs | length' "$q.json")" = 12 ] ||
        fail "$q.json: $(head -c 300 "$q.json")"
    # The same accounting in the JSON's runs.
    bad=$(jq -c '.runs[] | select(
        if .mode == "full" then (.lookups > 0 and .interns == .lookups and .tex_tiles_loaded + .tex_tiles_kept > 0 and
                                 .tex_lookups == .lookups and .ustr_lookups >= .interns)
        elif .mode == "bypass" then (.lookups == 0 and .interns == .bypasses and .interns > 0 and
                                     .tex_tiles_loaded + .tex_tiles_kept == 0 and .tex_lookups == 0 and
                                     .ustr_lookups >= .interns)
        elif .mode == "early-out" then (.interns == 0 and .tex_tiles_loaded + .tex_tiles_kept == 0 and
                                        .tex_lookups == 0)
        else false end | not)' "$q.json")
    [ -z "$bad" ] || fail "$q.json accounting: $bad"
    ;;
interrupt)
    # Ctrl-C stops after the current render; what was measured is written,
    # marked incomplete, and the exit status says so (130).
    # Many rounds of renders long enough that the study is still going;
    # the signal goes once the second render has started (the handler is
    # in place by then).
    # The signal goes to study's own process group, as Ctrl-C at a terminal
    # would (set -m: a job in a group of its own, SIGINT not ignored).
    set -m
    "$study" --quick --repeat 40 -r 320 240 --out i s.obj >i.out 2>i.err &
    pid=$!
    wait_for_line i.err "render 2 of" 60 || { kill -KILL $pid; fail "the second render never started"; }
    kill -INT -- -$pid
    wait $pid
    rc=$?
    [ $rc = 130 ] || fail "exit $rc after Ctrl-C, want 130"
    [ "$(jq .complete i.json)" = false ] || fail "i.json not marked incomplete"
    rows=$(($(wc -l <i.csv) - 1))
    [ "$rows" -ge 1 ] && [ "$rows" -lt 240 ] || fail "$rows rows after Ctrl-C"
    [ -s i.png ] || fail "no plot after Ctrl-C"
    # The tables say their rows had fewer renders than asked.
    grep -q "full, lock lockfree (median of up to 40 renders; .*interrupted" i.out ||
        fail "no 'interrupted' in the heading: $(head -5 i.out)"
    grep -qE "\(([0-9]|[1-3][0-9]) of 40 renders\)" i.out || fail "no row count: $(head -8 i.out)"
    # Each render is a process of its own group, which Ctrl-C at the
    # terminal does not reach: the first lets it finish; a second stops it
    # too (a render of minutes here), and leaves no render running.
    "$study" --threads 1 --repeat 1 --modes full -r 320 240 --spp 65536 --out j s.obj >j.out 2>j.err &
    pid=$!
    wait_for_line j.err "render 1 of 1" 60 || { kill -KILL $pid; fail "the timed render never started"; }
    kill -INT -- -$pid
    # The second once the first is taken: signals do not queue.
    wait_for_line j.err "stopping after this render" 60 || fail "the first Ctrl-C was not taken"
    kill -INT -- -$pid
    wait $pid
    rc=$?
    [ $rc = 130 ] || fail "exit $rc after two Ctrl-C, want 130"
    stopped_clean j
    # A Ctrl-C that reaches a render as it starts (before the render has a
    # process group of its own) ends it by SIGINT: that render was
    # interrupted, not broken. A stand-in render does what that race does
    # (the real one runs the warm-up and the first timed render): the study
    # gets its Ctrl-C, then the render dies of SIGINT.
    real=$(dirname "$study")/../renderer/render
    printf '#!/bin/sh\nn=$(cat race.n 2>/dev/null || echo 0); echo $((n + 1)) >race.n\n[ "$n" -lt 2 ] && exec "%s" "$@"\nkill -INT $PPID; kill -INT $$\n' \
        "$real" >race.sh
    chmod +x race.sh
    "$study" --quick --repeat 4 --threads 1 --modes full -r 64 48 --render ./race.sh --out k s.obj \
        >k.out 2>k.err
    rc=$?
    [ $rc = 130 ] || fail "a render Ctrl-C reached as it started: exit $rc, want 130: $(tail -2 k.err)"
    [ "$(wc -l <k.csv)" = 2 ] || fail "k.csv: $(cat k.csv)"
    ;;
deadline)
    # --deadline stops the study by itself as Ctrl-C would: the running
    # render finishes, what was measured is written, marked incomplete,
    # exit 130; --grace seconds on, the running render is stopped too.
    # Times generous enough for a sanitizer's build on a loaded machine: its
    # untimed first render and first timed one once took over 10 s there
    # (CI beside other builds), so the row this wants has 20.
    "$study" --quick --repeat 63 -r 640 480 --deadline 8 --grace 12 --out d s.obj >d.out 2>d.err
    rc=$?
    [ $rc = 130 ] || fail "exit $rc at the deadline, want 130: $(tail -2 d.err)"
    grep -q "the deadline (8 s) has passed: stopping after this render" d.err ||
        fail "the deadline not said: $(tail -2 d.err)"
    [ "$(jq .complete d.json)" = false ] || fail "d.json not marked incomplete"
    [ "$(wc -l <d.csv)" -ge 2 ] || fail "no row at the deadline: $(cat d.csv)"
    # A render of minutes: stopped the grace after the deadline, no row of
    # it, nothing left behind, no render outliving the study. (Killed at
    # 60 s where the grace is not kept, its render with it.)
    timeout -s KILL 60 "$study" --threads 1 --repeat 1 --modes full -r 320 240 --spp 65536 \
        --deadline 5 --grace 1 --out "$tmp/g" s.obj >g.out 2>g.err
    rc=$?
    [ $rc = 137 ] && pkill -KILL -f -- "$tmp/g.run.tmp"
    [ $rc = 130 ] || fail "exit $rc after the grace, want 130: $(tail -2 g.err)"
    grep -q "render 1 of 1" g.err || fail "the deadline came before the timed render: $(cat g.err)"
    stopped_clean "$tmp/g"
    # A deadline already passed: no timed render, no work sized (renders
    # growing to the largest image), the files still written. A stand-in
    # render counts the renders: the untimed first one only.
    real=$(dirname "$study")/../renderer/render
    printf '#!/bin/sh\necho x >>renders.n\nexec "%s" "$@"\n' "$real" >count.sh
    chmod +x count.sh
    "$study" --quick --deadline 0 --render ./count.sh --out z s.obj >z.out 2>z.err
    rc=$?
    [ $rc = 130 ] || fail "deadline 0: exit $rc, want 130"
    [ "$(wc -l <z.csv)" = 1 ] && [ "$(jq .complete z.json)" = false ] || fail "deadline 0: $(cat z.csv)"
    [ "$(wc -l <renders.n)" = 1 ] || fail "deadline 0: $(wc -l <renders.n) renders, want 1"
    rm renders.n
    timeout -s KILL 120 "$study" --threads 1 --modes early-out --min-render-ms 600000 \
        --deadline 0 --render ./count.sh --out "$tmp/w" s.obj >w.out 2>w.err
    rc=$?
    [ $rc = 137 ] && pkill -KILL -f -- "$tmp/w.run.tmp"
    [ $rc = 130 ] || fail "deadline 0, the work to size: exit $rc, want 130"
    [ "$(wc -l <renders.n)" = 1 ] || fail "deadline 0 sized the work: $(wc -l <renders.n) renders"
    ;;
flags)
    # What the user gives wins over --quick's defaults, as "--name value" or
    # "--name=value"; each row times its import (load_secs); --version is
    # study's own.
    out=$("$study" --quick --threads=1,3 --repeat=2 --modes full --out f s.obj 2>/dev/null) ||
        fail "exit $?"
    grep -q -- "-t3" <<<"$out" || fail "no -t3 row: $out"
    grep -q "median of 2 renders" <<<"$out" || fail "not 2 renders a row: $out"
    [ "$(wc -l <f.csv)" = 5 ] || fail "f.csv has $(wc -l <f.csv) lines, want 5 (2 threads x 2)"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        !($col["load_secs"] > 0) { bad = bad " " NR } END { if (bad) { print "rows" bad; exit 1 } }' \
        f.csv || fail "load_secs not above 0 in f.csv"
    rows_honest f.csv "1:lockfree 3:lockfree" || fail "f.csv: --threads=1,3"
    out=$("$study" --quick --threads 2 --repeat 3 --locks spin,rwspin,sharded --modes early-out \
        --out l s.obj 2>/dev/null) || fail "--locks spin,rwspin,sharded: exit $?"
    rows_honest l.csv "2:spin 2:rwspin 2:sharded" || fail "l.csv: --locks spin,rwspin,sharded"
    # The verdict says of each other lock whether its runs overlap the fastest's
    # (its fastest run no slower than the best lock's slowest): the runs' own times.
    line=$(grep '^  early-out at -t2: ' <<<"$out") || fail "no verdict line: $out"
    best=$(sed -E 's/^  early-out at -t2: ([a-z]+) is .*/\1/' <<<"$line")
    others=$(sed -E 's/^[^:]*: [a-z]+ is //; s/, /\n/g' <<<"$line")
    [ "$(wc -l <<<"$others")" = 2 ] || fail "verdict: $line"
    while read -r ratio lock note; do
        want=false
        jq -e --arg b "$best" --arg o "$lock" '[.runs[] | select(.threads == 2)] as $r |
            ([$r[] | select(.lock == $o) | .render_secs] | min) <=
            ([$r[] | select(.lock == $b) | .render_secs] | max)' l.json >/dev/null && want=true
        got=false
        [ "$note" = "(runs overlap: not told apart)" ] && got=true
        [ "$got" = "$want" ] || fail "verdict on $lock ($ratio) says overlap $got, the runs $want: $line"
    done <<<"$others"
    # With an --envmap, opened before the workers start: the texture system's
    # open_us counts it, the workers' open_secs does not (their share read
    # the environment's decode as theirs, past 100%: a review).
    "$texgen" --count 1 --size 256 --seed 2 "$tmp/env" >/dev/null || fail "texgen env"
    "$study" --quick --threads 1 --modes full --envmap env/tex00.png --out e s.obj >/dev/null 2>&1 ||
        fail "--envmap: exit $?"
    jq -e '[.runs[] | select(.open_secs <= .busy_secs and .tex_open_us / 1e6 > .open_secs)] | length == 1' \
        e.json >/dev/null || fail "--envmap: open_secs $(jq -c '[.runs[] | {open_secs, busy_secs, tex_open_us}]' e.json)"
    "$study" --version | grep -q '^study [0-9]' || fail "--version: $("$study" --version)"
    ;;
mpi)
    # --mpi-ranks 1,2: ranks as a dimension. The 2-rank renders run under
    # mpirun and do the same work (the same texture lookups) as one process.
    # CI runs as root, where Open MPI refuses unless told: study tells it.
    unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    out=$("$study" --quick --mpi-ranks 1,2 --modes full,bypass --mpirun "$4" --render "$5" \
        --out m s.obj 2>/dev/null) || fail "exit $?"
    for want in "ranks 1, full, lock lockfree" "ranks 2, full, lock lockfree" \
        "ranks 2, bypass, lock lockfree"; do
        grep -qF -- "$want" <<<"$out" || fail "no '$want' in the output: $out"
    done
    [ "$(wc -l <m.csv)" = 9 ] || fail "m.csv has $(wc -l <m.csv) lines, want 9"
    # The texture system's own count, summed over the ranks, is the job's too.
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { key = $col["mode"] "," $col["threads"]; k = $col["ranks"]
          look[key "," k] = $col["lookups"] " " $col["tex_lookups"]; seen[k]++
          if (k == 2 && !($col["comm_secs"] > 0 && $col["render_secs"] > 0)) bad = bad " row" NR }
        END { if (seen[1] != 4 || seen[2] != 4) bad = bad " ranks:" seen[1] "/" seen[2]
              for (x in look) { split(x, a, ","); if (look[a[1] "," a[2] ",1"] != look[a[1] "," a[2] ",2"]) bad = bad " " x }
              if (bad) { print bad; exit 1 } }' m.csv || fail "m.csv: ranks, lookups or comm_secs"
    rows_honest m.csv "1:lockfree 2:lockfree" || fail "m.csv: workers or lock under mpirun"
    ;;
same_work)
    # The study's renders are render's own (each its own process, its
    # --stats-json read back): a standalone render with the same options
    # does the very same work, count for count, in every mode and lock.
    render=$4
    "$study" --quick --threads 2 --locks mutex,default --integrator eyelight --out w s.obj \
        >/dev/null 2>&1 || fail "study: exit $?"
    keys="rays shading_points lookups interns bypasses early_outs tiles_rendered"
    for lock in mutex lockfree; do
        for mode in full bypass early-out; do
            flag=
            [ $mode = bypass ] && flag=--bypass-texture
            [ $mode = early-out ] && flag=--early-out
            "$render" -r 64x48 --integrator eyelight -t 2 --ustring-lock $lock $flag --quiet \
                --stats-json "one.json" -o one.exr s.obj || fail "render $mode $lock: exit $?"
            row=$(awk -F, -v m=$mode -v l=$lock 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                $col["mode"] == m && $col["lock"] == l { print $col["rays"], $col["shading_points"],
                $col["lookups"], $col["interns"], $col["bypasses"], $col["early_outs"],
                $col["ustr_lookups"] }' w.csv)
            one=$(jq -r '"\(.rays) \(.shading_points) \(.lookups) \(.interns) \(.bypasses) \(.early_outs) \(.ustring.lookups)"' one.json)
            [ -n "$row" ] && [ "$row" = "$one" ] ||
                fail "$mode, $lock: the study counted '$row', render alone '$one' ($keys, table lookups)"
        done
    done
    ;;
render_on_path)
    # A study with no ../renderer/render beside it (installed alone, or run
    # through a loader as on a lent machine) runs the render on PATH.
    mkdir alone bin && cp "$study" alone/study && ln -s "$4" bin/render
    PATH=$tmp/bin:$PATH alone/study --quick --threads 1 --modes full --out p s.obj >p.out 2>&1 ||
        fail "study alone: exit $?: $(tail -2 p.out)"
    rows_honest p.csv "1:lockfree" || fail "p.csv: $(cat p.csv)"
    grep -qx "render: $tmp/bin/render" p.out || fail "the header does not name it: $(head -5 p.out)"
    [ "$(jq -r .provenance.render p.json)" = "$tmp/bin/render" ] || fail "p.json's provenance"
    # And none on PATH either: one line that names the program it tried.
    PATH=/nonexistent alone/study --quick --threads 1 --modes full --out n s.obj >n.out 2>&1 &&
        fail "study with no render: exit 0"
    grep -q "render: cannot start it" n.out || fail "no render: $(cat n.out)"
    ;;
work_size)
    # Without -r or --spp the image grows until the fastest configuration
    # (early-out, at the most threads the machine runs) takes >= 100 ms, or
    # --min-render-ms (400 here: more than a 640x480 eyelight render of one
    # quad takes even in a sanitizer's build), and the header says so; every
    # row renders that size.
    out=$("$study" --threads 1 --repeat 1 --modes early-out,bypass --integrator eyelight \
        --min-render-ms 400 --out z s.obj 2>/dev/null) || fail "exit $?"
    line=$(grep '^work: ' <<<"$out") || fail "no work line: $out"
    fastest='the fastest render \(early-out, -t 1: ([0-9]+) ms\) takes >= 400 ms$'
    if [[ $line =~ ^work:\ 640x480\ kept:\ $fastest ]]; then
        # A machine so busy (or a sanitizer's build so slow) that 640x480
        # already takes 400 ms: nothing to grow, and the line says why.
        [ "${BASH_REMATCH[1]}" -ge 400 ] || fail "kept, though under 400 ms: $line"
        grep -qF "options: 640x480 pixels" <<<"$out" || fail "kept, but not 640x480: $out"
    else
        [[ $line =~ ^work:\ 640x480\ scaled\ to\ ([0-9]+)x([0-9]+)\ so\ that\ $fastest ]] ||
            fail "work line: $line"
        w=${BASH_REMATCH[1]} h=${BASH_REMATCH[2]} ms=${BASH_REMATCH[3]}
        [ $((w * 3)) -ge $((h * 4 - 4)) ] && [ $((w * 3)) -le $((h * 4 + 4)) ] && [ "$w" -gt 640 ] ||
            fail "$w x $h: not 640x480 grown in shape"
        [ "$ms" -ge 400 ] || fail "the sizing render took under 400 ms: $line"
        grep -qF "options: ${w}x$h pixels" <<<"$out" || fail "the options do not say ${w}x$h: $out"
        jq -e --arg w "640x480 scaled to ${w}x$h" '.work | startswith($w)' z.json >/dev/null ||
            fail "z.json lacks the work line"
    fi
    # Either way the timed rows render that size, so they take as long,
    # give or take what a busy machine adds or takes away.
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["render_secs"] < 0.2 { bad = 1 } END { exit bad || NR < 2 }' z.csv ||
        fail "a row under 200 ms, or none: $(cat z.csv)"
    # -r (or --spp, or --quick) is the user's choice: kept; and
    # --min-render-ms 0 keeps render's size.
    out=$("$study" --threads 1 --repeat 1 --modes early-out --integrator eyelight \
        --min-render-ms 0 --out x s.obj 2>/dev/null) || fail "--min-render-ms 0: exit $?"
    grep -q '^work: ' <<<"$out" && fail "--min-render-ms 0 sized the work: $out"
    grep -qF "options: 640x480 pixels" <<<"$out" || fail "--min-render-ms 0: not 640x480: $out"
    out=$("$study" --threads 1 --repeat 1 --modes early-out -r 32 24 --out y s.obj 2>/dev/null) ||
        fail "-r 32 24: exit $?"
    grep -q '^work: ' <<<"$out" && fail "-r 32 24 was scaled: $out"
    grep -qF "options: 32x24 pixels" <<<"$out" || fail "-r 32 24 not kept: $out"
    ;;
waiting)
    # Two workers on one CPU wait for it half the time: the row says so, in
    # the table, the CSV (cpu_share) and the JSON (its flags). And the study
    # counts the CPUs it may run on, not the machine's: -t2 is marked '*'.
    command -v taskset >/dev/null || { echo "skipped: no taskset"; exit 77; }
    out=$(taskset -c 0 "$study" --quick --threads 2 --modes early-out -r 320 240 --out t s.obj \
        2>/dev/null) || fail "exit $?"
    grep -qE -- "^  -t2\* .* ! on a CPU [0-9]+% of the time: the threads waited" <<<"$out" ||
        fail "-t2 on one CPU not flagged, or not marked '*': $out"
    online=$(getconf _NPROCESSORS_ONLN)
    if [ "$online" -gt 1 ]; then
        grep -qE -- "^machine: 1 physical cores, 1 hardware threads of $online online \(its CPU affinity\)" \
            <<<"$out" || fail "the machine line under taskset: $(grep ^machine <<<"$out")"
    fi
    jq -e '.usable_cpus == 1' t.json >/dev/null || fail "t.json's usable_cpus: $(jq .usable_cpus t.json)"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        !($col["cpu_share"] > 0 && $col["cpu_share"] < 0.75) { bad = 1 } END { exit bad }' t.csv ||
        fail "cpu_share of two workers on one CPU: $(cut -d, -f1-13 t.csv)"
    jq -e '[.rows[] | select(.threads == 2 and .cpu_share < 0.8 and (.flags | index("waiting")))] | length > 0' \
        t.json >/dev/null || fail "t.json's row not flagged: $(jq -c .rows t.json | head -c 400)"
    ;;
plot)
    # --plot redraws a study's tables and picture from its JSON alone (for a
    # study made on a machine without gnuplot): the same rows as the study
    # printed, and a PNG.
    out=$("$study" --quick --locks default,mutex --out p s.obj 2>/dev/null) || fail "study: exit $?"
    rm -f p.png
    again=$("$study" --plot p.json --out r 2>/dev/null) || fail "--plot: exit $?"
    [ "$(head -c 8 r.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "r.png is not a PNG"
    rows() { grep -E '^  -t[0-9]|^(full|bypass|early-out), lock|^  opening textures' <<<"$1"; }
    [ "$(rows "$out")" = "$(rows "$again")" ] ||
        fail "--plot's tables differ: $(diff <(rows "$out") <(rows "$again"))"
    "$study" --plot p.json >/dev/null 2>&1 && [ -s p.png ] || fail "--plot without --out: no p.png"
    # Not a study's JSON: one line, exit 1, no picture.
    echo '{"width": 3}' >bad.json
    err=$("$study" --plot bad.json 2>&1 >/dev/null) && fail "--plot of a bad file: exit 0"
    [ "$err" = "study: bad.json: not a study's JSON (no scene, or no runs)" ] || fail "bad file: '$err'"
    [ ! -e bad.png ] || fail "a picture of a bad file"
    err=$("$study" --plot nosuch.json 2>&1 >/dev/null) && fail "--plot of no file: exit 0"
    [[ $err == "study: nosuch.json: cannot read: No such file or directory" ]] || fail "no file: '$err'"
    # A study's file edited to hold what no study writes: a round past 63 (a
    # round of 2^31 made --plot walk every round up to it), a thread count
    # of 1e300 (undefined, cast to an integer): the run is refused.
    for edit in '.runs[0].round = 2147483647' '.runs[0].threads = 1e300' '.runs[0].round = 0'; do
        jq "$edit" p.json >edited.json || fail "jq $edit"
        err=$(timeout 20 "$study" --plot edited.json --out edited 2>&1 >/dev/null) &&
            fail "--plot of a file with $edit: exit 0"
        [ "$err" = "study: edited.json: run 1: not a run of a study" ] || fail "$edit: '$err'"
    done
    ;;
bad_input)
    check() { # message-part args...
        local msg=$1
        shift
        out=$("$study" --out b "$@" 2>&1 >/dev/null) && fail "study $*: exit 0"
        [[ $out == *"$msg"* ]] || fail "study $*: '$out' lacks '$msg'"
        [ -z "$(ls b.* 2>/dev/null)" ] || fail "study $*: left $(ls b.*)"
    }
    check "--modes" --quick --modes full,sideways s.obj
    check "--bypass-texture: the study runs the texture modes --modes names" --quick --bypass-texture s.obj
    check "--early-out: the study runs the texture modes --modes names" --quick --early-out s.obj
    check "--locks" --quick --locks futex s.obj
    check "--threads" --threads , s.obj
    check "--threads" --threads 0,2 s.obj
    check "--mpi-ranks" --quick --mpi-ranks 0 s.obj
    check "--min-render-ms" --min-render-ms fast s.obj
    check "--min-render-ms" --min-render-ms -5 s.obj
    check "--deadline" --quick --deadline -1 s.obj
    check "--deadline" --quick --deadline 2s s.obj
    check "--deadline" --quick --deadline 604801 s.obj
    check "--grace" --quick --grace '' s.obj
    check "--mpi-ranks" --quick --mpi-ranks 2,x s.obj
    # A launcher that is not there fails before the first timed render.
    out=$("$study" --quick --mpi-ranks 1,2 --mpirun ./no-mpirun --out b s.obj 2>&1 >/dev/null) &&
        fail "study with no mpirun: exit 0"
    [[ $out == *"no-mpirun -np 2"* && $out != *"render 1 of"* ]] ||
        fail "study with no mpirun: '$out'"
    check "nosuch.gltf" --quick nosuch.gltf
    check "" --quick --no-such-option s.obj
    # An output prefix it cannot write is found before any render.
    out=$("$study" --quick --out nodir/x s.obj 2>&1 >/dev/null) && fail "study --out nodir/x: exit 0"
    [[ $out == *"nodir/x.csv.tmp: cannot write"* ]] || fail "study --out nodir/x: '$out'"
    [[ $out != *"render 1 of"* ]] || fail "study --out nodir/x rendered before failing"
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
