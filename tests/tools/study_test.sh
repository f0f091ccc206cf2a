#!/usr/bin/env bash
# study: a --quick study of a tiny scene gives its tables and its three
# files (the CSV one row per run with the documented columns, the JSON with
# the mode accounting right, a PNG); bad input gives one clear line, a
# non-zero exit, and no files.
set -u
study=$1 texgen=$2 case_=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
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
    for want in "machine: " "command: " "version: study " "cpu: " "options: 64x48 pixels, spp 16" \
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
    best=$(sed -n 's/^  full at -t2: \([a-z]*\) is \([0-9.]*\)x \([a-z]*\)$/\1 \2 \3/p' <<<"$line")
    [ -n "$best" ] || fail "verdict line: $line"
    read -r b ratio other <<<"$best"
    jline=$(grep '"mode": "full", "threads": 2' "$q.json") || fail "no full verdict in $q.json"
    awk -v l="$jline" -v b="$b" -v o="$other" -v r="$ratio" 'BEGIN {
        match(l, "\"" b "\": [0-9.]+"); sb = substr(l, RSTART + length(b) + 4, RLENGTH - length(b) - 4)
        match(l, "\"" o "\": [0-9.]+"); so = substr(l, RSTART + length(o) + 4, RLENGTH - length(o) - 4)
        d = so / sb - r; if (d < 0) d = -d
        exit !(sb > 0 && so >= sb && d < 0.006) }' || fail "verdict $line against $jline"
    for key in '"provenance": {"command": ' '"version": ' '"date": "20' '"cpu_model": ' \
        '"options": {"width": 64, "height": 48, "spp": 16' '"verdict": {"ranks": 1' '"interning": ['; do
        grep -qF -- "$key" "$q.json" || fail "$q.json lacks $key"
    done
    [ -s "$q.csv" ] && [ -s "$q.json" ] || fail "no CSV or JSON"
    [ "$(head -c 8 "$q.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$q.png is not a PNG"
    # One row per run: 2 threads x 3 modes x 2 locks, repeat 1; the columns.
    [ "$(wc -l <"$q.csv")" = 13 ] || fail "$q.csv has $(wc -l <"$q.csv") lines, want 13"
    head -1 "$q.csv" | grep -q '^round,mode,lock,threads,workers,table_lock,render_secs,.*,lookups,interns,bypasses,early_outs,.*tex_tiles_loaded' ||
        fail "$q.csv header: $(head -1 "$q.csv")"
    [ -z "$(ls ./*.tmp 2>/dev/null)" ] || fail "temporary files left"
    rows_honest "$q.csv" "1:lockfree 2:lockfree 1:mutex 2:mutex" || fail "$q.csv: --threads, --locks"
    # Mode accounting, from the CSV's columns: full interns every lookup,
    # bypass interns every slot and reads no tile, early-out interns none.
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { m = $col["mode"]; l = $col["lookups"]; n = $col["interns"]; b = $col["bypasses"]
          t = $col["tex_tiles_loaded"]
          if (m == "full" && !(l > 0 && n == l && t > 0)) bad = bad " full:" NR
          if (m == "bypass" && !(l == 0 && n == b && n > 0 && t == 0)) bad = bad " bypass:" NR
          if (m == "early-out" && !(n == 0 && t == 0)) bad = bad " early-out:" NR }
        END { if (bad) { print "rows" bad; exit 1 } }' "$q.csv" || fail "mode accounting"
    grep -q '"complete": true' "$q.json" && [ "$(grep -c '"render_secs"' "$q.json")" = 12 ] ||
        fail "$q.json: $(head -c 300 "$q.json")"
    # The same accounting in the JSON, one run per line.
    num() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" <<<"$2"; }
    while read -r line; do
        l=$(num lookups "$line") n=$(num interns "$line") b=$(num bypasses "$line")
        t=$(num tex_tiles_loaded "$line")
        case $line in
        *'"mode": "full"'*) [ "$l" -gt 0 ] && [ "$n" = "$l" ] && [ "$t" -gt 0 ] ;;
        *'"mode": "bypass"'*) [ "$l" = 0 ] && [ "$n" = "$b" ] && [ "$n" -gt 0 ] && [ "$t" = 0 ] ;;
        *'"mode": "early-out"'*) [ "$n" = 0 ] && [ "$t" = 0 ] ;;
        *) false ;;
        esac || fail "$q.json accounting: $line"
    done < <(grep '"render_secs"' "$q.json")
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
    for _ in $(seq 600); do
        grep -q "render 2 of" i.err && break
        sleep 0.1
    done
    grep -q "render 2 of" i.err || { kill -KILL $pid; fail "the second render never started"; }
    kill -INT -- -$pid
    wait $pid
    rc=$?
    [ $rc = 130 ] || fail "exit $rc after Ctrl-C, want 130"
    grep -q '"complete": false' i.json || fail "i.json not marked incomplete"
    rows=$(($(wc -l <i.csv) - 1))
    [ "$rows" -ge 1 ] && [ "$rows" -lt 240 ] || fail "$rows rows after Ctrl-C"
    [ -s i.png ] || fail "no plot after Ctrl-C"
    # The tables say their rows had fewer renders than asked.
    grep -q "full, lock lockfree (median of up to 40 renders; .*interrupted" i.out ||
        fail "no 'interrupted' in the heading: $(head -5 i.out)"
    grep -qE "\(([0-9]|[1-3][0-9]) of 40 renders\)" i.out || fail "no row count: $(head -8 i.out)"
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
    out=$("$study" --quick --threads 2 --locks spin,rwspin,sharded --modes early-out --out l s.obj \
        2>/dev/null) || fail "--locks spin,rwspin,sharded: exit $?"
    rows_honest l.csv "2:spin 2:rwspin 2:sharded" || fail "l.csv: --locks spin,rwspin,sharded"
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
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { key = $col["mode"] "," $col["threads"]; k = $col["ranks"]
          look[key "," k] = $col["lookups"]; seen[k]++
          if (k == 2 && !($col["comm_secs"] > 0 && $col["render_secs"] > 0)) bad = bad " row" NR }
        END { if (seen[1] != 4 || seen[2] != 4) bad = bad " ranks:" seen[1] "/" seen[2]
              for (x in look) { split(x, a, ","); if (look[a[1] "," a[2] ",1"] != look[a[1] "," a[2] ",2"]) bad = bad " " x }
              if (bad) { print bad; exit 1 } }' m.csv || fail "m.csv: ranks, lookups or comm_secs"
    rows_honest m.csv "1:lockfree 2:lockfree" || fail "m.csv: workers or lock under mpirun"
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
    check "--locks" --quick --locks futex s.obj
    check "--threads" --threads , s.obj
    check "--threads" --threads 0,2 s.obj
    check "--mpi-ranks" --quick --mpi-ranks 0 s.obj
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
