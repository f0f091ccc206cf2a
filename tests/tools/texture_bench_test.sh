#!/usr/bin/env bash
# texture-bench keeps its contract (docs/design.md). Not a timing test: the
# files are tiny and one round is timed.
#
#   texture_bench_test.sh BENCH TEXGEN PNG_TO_JPEG CASE [TESTDATA]
#
# --cold cases: the result line's format, and that both sides decoded the
# same pixels: the bench reads level 0 back through the texture system
# (raw, every texel) and compares it with the floor's decode, file by file,
# and fails where they differ, so the floor cannot silently do less work.
#
# --floor cases: the result line's format, its figures agreeing with each
# other, and the floor's results equal to the texture system's, bit for bit
# (the bench compares the checksums and fails where they differ), for each
# sample type, channel count and filter. $PNG_CHANNELS and $MAKETX (from
# the environment) make the inputs that texgen's RGB PNGs are not.
set -u
bench=$1
texgen=$2
png_to_jpeg=$3
case_=$4
testdata=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cold_re='^texture-bench cold files=[0-9]+ bytes=[0-9]+ decode_secs=[0-9]+\.[0-9]{4} secs=[0-9]+\.[0-9]{4} ratio=[0-9]+\.[0-9]{3} spread=[0-9]+\.[0-9]{3}-[0-9]+\.[0-9]{3}$'

# Runs --cold with the arguments given; checks the one result line (with
# `files` and `bytes` as expected: $1, $2) and the checksum line.
cold_check() {
    local files=$1 bytes=$2
    shift 2
    "$bench" --cold "$@" >"$tmp/out" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/out")" = 1 ] || fail "expected one line on stdout:"$'\n'"$(cat "$tmp/out")"
    grep -qE "$cold_re" "$tmp/out" || fail "bad result line: $(cat "$tmp/out")"
    grep -qE "^texture-bench cold files=$files bytes=$bytes " "$tmp/out" ||
        fail "expected files=$files bytes=$bytes: $(cat "$tmp/out")"
    # The ratio is ours over the floor: within what the times' four
    # decimals allow of secs / decode_secs, and at one round both ends of
    # the spread, which comes from the rounds' own ratios.
    awk -v repeat="$*" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
        END { split(v["spread"], s, "-"); r = v["ratio"]; d = v["decode_secs"]; o = v["secs"]
              if (d > 0.0001 && (r < (o - 0.00005) / (d + 0.00005) - 0.0005 ||
                                 r > (o + 0.00005) / (d - 0.00005) + 0.0005)) exit 1
              if (repeat ~ /--repeat 1 / && (s[1] != r || s[2] != r)) exit 1 }' "$tmp/out" ||
        fail "ratio not ours over the floor: $(cat "$tmp/out")"
    grep -qE '^  level 0 checksum: ours ([0-9a-f]{16}), floor \1$' "$tmp/err" ||
        fail "level 0 checksums differ or are missing:"$'\n'"$(cat "$tmp/err")"
    # Ours brought every tile of every level in: 10 of an 80x80 file (4 at
    # level 0, one at each of the 6 below), 5 of a 16x16 one; kept by the
    # decode (the files fit in the cache) and each found there once.
    grep -qE "^  tiles: $tiles hits, 0 misses \(100\.00% hits\), 0 loaded, $tiles kept," "$tmp/err" ||
        fail "expected $tiles tiles kept and touched:"$'\n'"$(cat "$tmp/err")"
}

# Tiny RGB PNGs of sizes that are and are not whole tiles (64), as JPEGs too.
make_inputs() {
    "$texgen" --count 2 --size 80 "$tmp/a" >/dev/null || fail "texgen"
    "$texgen" --count 1 --size 16 --seed 3 "$tmp/b" >/dev/null || fail "texgen"
    "$png_to_jpeg" 90 "$tmp"/a/*.png "$tmp"/b/*.png || fail "png_to_jpeg"
}
png_bytes=$((2 * 80 * 80 * 3 + 16 * 16 * 3))
tiles=25

floor_re='^texture-bench floor threads=[0-9]+ filter=(closest|bilinear|trilinear|anisotropic) lookups=[0-9]+ floor_mlookups=[0-9]+\.[0-9]{3} mlookups=[0-9]+\.[0-9]{3} ratio=[0-9]+\.[0-9]{3} spread=[0-9]+\.[0-9]{3}-[0-9]+\.[0-9]{3}$'

# Runs --floor with filter $1 and the arguments given, at 1 and 2 threads,
# 1000 lookups per thread, one round; checks the two result lines, both
# sides' checksums equal at each, and each line's figures: with one round,
# ratio is both ends of spread and floor_mlookups / mlookups (to rounding).
floor_check() {
    local filter=$1
    shift
    "$bench" --floor --threads 1,2 --lookups 1000 --repeat 1 --filter "$filter" "$@" \
        >"$tmp/out" 2>"$tmp/err" || fail "--filter $filter $*: exit $?: $(tail -3 "$tmp/err")"
    if [ "$(wc -l <"$tmp/out")" != 2 ] || [ "$(grep -cE "$floor_re" "$tmp/out")" != 2 ]; then
        fail "--filter $filter: bad result lines:"$'\n'"$(cat "$tmp/out")"
    fi
    for t in 1 2; do
        grep -qE "^texture-bench floor threads=$t filter=$filter lookups=$((t * 1000)) " "$tmp/out" ||
            fail "--filter $filter: no line for $t threads:"$'\n'"$(cat "$tmp/out")"
    done
    [ "$(grep -cE '^  checksum ours ([0-9.]+ [0-9a-f]{16}), floor \1$' "$tmp/err")" = 2 ] ||
        fail "--filter $filter: checksums differ or are missing:"$'\n'"$(cat "$tmp/err")"
    # The rates are printed to 0.001, so their quotient is off by at most
    # about 0.0005 / rate of each, relatively; the ratio by 0.0005.
    awk '{
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        split(v["spread"], lh, "-"); f = v["floor_mlookups"]; o = v["mlookups"]
        a = f / o; tol = a * (0.0006 / f + 0.0006 / o) + 0.0006
        if (v["ratio"] != lh[1] || v["ratio"] != lh[2] || a - v["ratio"] > tol ||
            v["ratio"] - a > tol) { print "inconsistent: " $0; exit 1 }
    }' "$tmp/out" || fail "--filter $filter: figures disagree:"$'\n'"$(cat "$tmp/out")"
}

# Tiny textures: 8-bit RGB PNGs of 80 (not a power of two; tiles cut by
# the edge) and 384 (big enough that trilinear and anisotropic lookups
# blend two levels), and each as grey (c1), grey+alpha (c2) and RGBA (c4).
floor_inputs() {
    "$texgen" --count 2 --size 80 "$tmp/a" >/dev/null || fail "texgen"
    "$texgen" --count 1 --size 384 --seed 3 "$tmp/b" >/dev/null || fail "texgen"
    for n in 1 2 4; do
        "$PNG_CHANNELS" $n "$tmp"/a/tex00.png "$tmp"/a/tex01.png "$tmp"/b/tex00.png ||
            fail "png_channels $n"
    done
}

# maketx's output $1 (.exr or .tx) of each input, with options $2.
floor_maketx() {
    local ext=$1 opts=$2 f
    shift 2
    for f in "$@"; do
        # shellcheck disable=SC2086
        "$MAKETX" $opts -o "${f%.png}$ext" "$f" 2>/dev/null || fail "maketx $opts $f"
    done
}

floor_filters() {
    for filter in closest bilinear trilinear anisotropic; do
        floor_check "$filter" "$@"
    done
}

case $case_ in
cold_png)
    make_inputs
    cold_check 3 $png_bytes --repeat 1 "$tmp"/a/*.png "$tmp"/b/*.png
    grep -qE '^  round 1: floor [0-9.]+ s, ours [0-9.]+ s, ratio [0-9.]+$' "$tmp/err" ||
        fail "no round line: $(cat "$tmp/err")"
    # The same files opened raw (data textures), two rounds.
    cold_check 3 $png_bytes --raw --repeat 2 "$tmp"/a/*.png "$tmp"/b/*.png
    [ "$(grep -c '^  round [12]:' "$tmp/err")" = 2 ] || fail "expected 2 rounds: $(cat "$tmp/err")"
    ;;
cold_jpeg)
    make_inputs
    cold_check 3 $png_bytes --repeat 1 "$tmp"/a/*.jpg "$tmp"/b/*.jpg
    ;;
cold_pngsuite)
    # Every valid PngSuite file: grey of 1 to 16 bits, palettes, tRNS,
    # 16-bit colour, interlaced, odd sizes, every filter.
    [ -d "$testdata/pngsuite" ] || { echo "skipped: no PngSuite at '$testdata/pngsuite'"; exit 77; }
    files=("$testdata"/pngsuite/[!x]*.png)
    "$bench" --cold --repeat 1 "${files[@]}" >"$tmp/out" 2>"$tmp/err" ||
        fail "exit $?: $(tail -3 "$tmp/err")"
    grep -qE "$cold_re" "$tmp/out" || fail "bad result line: $(cat "$tmp/out")"
    grep -qE '^  level 0 checksum: ours ([0-9a-f]{16}), floor \1$' "$tmp/err" ||
        fail "level 0 checksums differ:"$'\n'"$(cat "$tmp/err")"
    ;;
cold_errors)
    printf 'not an image' >"$tmp/junk.png"
    err=$("$bench" --cold "$tmp/junk.png" 2>&1 >/dev/null); rc=$?
    [ $rc = 1 ] || fail "junk file: exit $rc, expected 1"
    grep -q "^texture-bench: $tmp/junk.png: not a PNG or JPEG file\$" <<<"$err" ||
        fail "junk file: got '$err'"
    err=$("$bench" --cold 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "no files: exit $rc, expected 2"
    ;;
floor_u8)
    # PNGs (decoded, tiles in the spill file) and a tiled TIFF (read tile
    # by tile); sRGB decoded, then raw; random and coherent lookups.
    floor_inputs
    floor_maketx .tx "" "$tmp"/b/tex00-c4.png
    files=("$tmp"/a/*.png "$tmp"/b/*.png "$tmp"/b/tex00-c4.tx)
    floor_filters "${files[@]}"
    floor_check trilinear --raw "${files[@]}"
    floor_check bilinear --pattern coherent "${files[@]}"
    ;;
floor_half)
    # Half RGBA, RGB (the wide taps) and grey (the general one), tiled EXR.
    floor_inputs
    floor_maketx .exr --half "$tmp"/a/tex00-c4.png "$tmp"/b/tex00-c4.png "$tmp"/b/tex00.png \
        "$tmp"/a/tex01-c1.png
    floor_filters "$tmp"/a/*.exr "$tmp"/b/*.exr
    ;;
floor_float)
    floor_inputs
    floor_maketx .exr --float "$tmp"/a/tex00.png "$tmp"/b/tex00-c4.png "$tmp"/a/tex01-c2.png
    floor_filters "$tmp"/a/*.exr "$tmp"/b/*.exr
    ;;
floor_pngsuite)
    # Every valid PngSuite file: grey of 1 to 16 bits, palettes, tRNS,
    # 16-bit colour (decoded from sRGB sample by sample), odd sizes.
    [ -d "$testdata/pngsuite" ] || { echo "skipped: no PngSuite at '$testdata/pngsuite'"; exit 77; }
    floor_filters "$testdata"/pngsuite/[!x]*.png
    ;;
floor_late)
    # Threads that each had a CPU but did not run side by side are called
    # out, for each side: two threads on two CPUs, one kept busy by another
    # process (the lookups warm, so both sides' runs are long enough).
    command -v taskset >/dev/null && taskset -c 0,1 true 2>/dev/null ||
        { echo "skipped: no taskset, or no CPUs 0 and 1 to pin to"; exit 77; }
    "$texgen" --count 2 --size 256 "$tmp/a" >/dev/null || fail "texgen"
    # The busy loop ends itself after 300 s, should this shell be killed
    # before its trap runs (a SIGKILL, a shell that skips EXIT traps on
    # signals); the trap ends it at once however the test ends otherwise.
    timeout 300 taskset -c 0 sh -c 'while :; do :; done' &
    hog=$!
    trap 'exit 1' HUP INT TERM
    trap 'kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT # however the test ends
    err=$(taskset -c 0,1 "$bench" --floor --threads 2 --repeat 3 --lookups 300000 "$tmp"/a/*.png \
        2>&1 >/dev/null)
    rc=$?
    kill "$hog"
    [ $rc = 0 ] || fail "exit $rc: $err"
    for side in "the floor" ours; do
        grep -qE "^texture-bench: warning: 2 threads, $side: waiting for a CPU [0-9]+% of the run" <<<"$err" ||
            fail "2 threads beside a busy CPU, no warning for $side:"$'\n'"$err"
    done
    ;;
floor_errors)
    "$texgen" --count 1 --size 16 "$tmp/a" >/dev/null || fail "texgen"
    err=$("$bench" --floor --cold "$tmp"/a/tex00.png 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "--floor --cold: exit $rc, expected 2"
    grep -q '^texture-bench: --cold and --floor' <<<"$err" || fail "--floor --cold: got '$err'"
    err=$("$bench" --floor --filter bogus "$tmp"/a/tex00.png 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "--filter bogus: exit $rc, expected 2"
    err=$("$bench" --floor --lookups 10 --repeat 1 "$tmp/missing.png" 2>&1 >/dev/null); rc=$?
    [ $rc = 1 ] || fail "missing file: exit $rc, expected 1"
    grep -q "missing.png" <<<"$err" || fail "missing file: not named: '$err'"
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
