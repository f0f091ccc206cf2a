#!/usr/bin/env bash
# study: a --quick study of a tiny scene gives its tables and its three
# files (the CSV one row per run with the documented columns, the JSON with
# the mode accounting right, a PNG); bad input gives one clear line, a
# non-zero exit, and no files.
set -u
study=$1 texgen=$2 case_=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$texgen" --count 1 --size 32 "$tmp/tex" >/dev/null || fail texgen
printf 'newmtl t\nKd 1 1 1\nmap_Kd tex/tex00.png\n' >"$tmp/s.mtl"
printf 'mtllib s.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl t\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\n' \
    >"$tmp/s.obj"
cd "$tmp" || exit 1

case $case_ in
quick)
    out=$("$study" --quick --locks default,mutex --out q s.obj 2>/dev/null) || fail "exit $?"
    for want in "machine: " "full, lock lockfree" "bypass, lock mutex" "early-out, lock lockfree" \
        "interning cost: bypass - early-out" "locks side by side, full" \
        "model: Universal Scalability Law" "-t2"; do
        grep -qF -- "$want" <<<"$out" || fail "no '$want' in the output: $out"
    done
    [ -s q.csv ] && [ -s q.json ] || fail "no CSV or JSON"
    [ "$(head -c 8 q.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "q.png is not a PNG"
    # One row per run: 2 threads x 3 modes x 2 locks, repeat 1; the columns.
    [ "$(wc -l <q.csv)" = 13 ] || fail "q.csv has $(wc -l <q.csv) lines, want 13"
    head -1 q.csv | grep -q '^round,mode,lock,threads,render_secs,.*,lookups,interns,bypasses,early_outs,.*tex_tiles_loaded' ||
        fail "q.csv header: $(head -1 q.csv)"
    [ -z "$(ls ./*.tmp 2>/dev/null)" ] || fail "temporary files left"
    # Mode accounting, from the CSV's columns: full interns every lookup,
    # bypass interns every slot and reads no tile, early-out interns none.
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { m = $col["mode"]; l = $col["lookups"]; n = $col["interns"]; b = $col["bypasses"]
          t = $col["tex_tiles_loaded"]
          if (m == "full" && !(l > 0 && n == l && t > 0)) bad = bad " full:" NR
          if (m == "bypass" && !(l == 0 && n == b && n > 0 && t == 0)) bad = bad " bypass:" NR
          if (m == "early-out" && !(n == 0 && t == 0)) bad = bad " early-out:" NR }
        END { if (bad) { print "rows" bad; exit 1 } }' q.csv || fail "mode accounting"
    grep -q '"complete": true' q.json && grep -q '"mode": "bypass"' q.json &&
        [ "$(grep -c '"render_secs"' q.json)" = 12 ] || fail "q.json: $(head -c 300 q.json)"
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
    check "nosuch.gltf" --quick nosuch.gltf
    check "" --quick --no-such-option s.obj
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
