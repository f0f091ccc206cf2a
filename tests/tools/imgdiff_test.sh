#!/usr/bin/env bash
# imgdiff: matches, differences, tolerance, failing-pixel budget, size
# mismatch, unreadable files and bad flags (exit 0 / 1 / 2 and one line);
# its difference image; imgconvert's exposure.
set -u
imgdiff=$1 texgen=$2 maketx=$3 imgconvert=$4 png_channels=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$texgen" --count 1 --size 32 --seed 1 "$tmp/a" >/dev/null || fail "texgen"
"$texgen" --count 1 --size 32 --seed 2 "$tmp/b" >/dev/null || fail "texgen"
"$texgen" --count 1 --size 16 --seed 1 "$tmp/c" >/dev/null || fail "texgen"
"$maketx" -o "$tmp/a.exr" "$tmp/a/tex00.png" || fail "maketx"
a=$tmp/a/tex00.png b=$tmp/b/tex00.png small=$tmp/c/tex00.png

out=$("$imgdiff" "$a" "$a") || fail "same file: exit $?"
[[ $out == "imgdiff: match: 0 of 1024 pixels over 0 "* ]] || fail "same file: '$out'"

out=$("$imgdiff" "$a" "$b"); rc=$?
[ $rc = 1 ] || fail "different images: exit $rc"
[[ $out == "imgdiff: differ: "* ]] || fail "different images: '$out'"

# Every channel counts: the same image with its blue reversed differs.
"$png_channels" 3 "$a" || fail "png_channels 3"
"$imgdiff" --quiet "$a" "$tmp/a/tex00-c3.png" && fail "an image differing in blue alone matched"

# The PNG and its maketx EXR differ only by half-float rounding, at most
# 0.00024 here: a tolerance above that passes, one below fails.
"$imgdiff" --quiet "$a" "$tmp/a.exr" && fail "exact compare of PNG and half EXR passed"
"$imgdiff" --quiet --tolerance 0.002 "$a" "$tmp/a.exr" || fail "PNG vs EXR within 0.002"
out=$("$imgdiff" --tolerance 0.0002 "$a" "$tmp/a.exr") && fail "PNG vs EXR within 0.0002: '$out'"
max=$(sed -n 's/.*(max \([0-9.e-]*\) at .*/\1/p' <<<"$out")
awk -v m="$max" 'BEGIN { exit !(m > 0.0002 && m < 0.0003) }' || fail "PNG vs EXR: max '$max' in '$out'"
n=$("$imgdiff" "$a" "$b" | sed -E 's/.*: ([0-9]+) of.*/\1/')
"$imgdiff" --quiet --max-fail "$n" "$a" "$b" || fail "--max-fail $n should pass"
"$imgdiff" --quiet --max-fail "$((n - 1))" "$a" "$b" && fail "--max-fail $((n - 1)) should fail"

err=$("$imgdiff" "$a" "$small" 2>&1); rc=$?
[ $rc = 1 ] && [[ $err == *"is 32x32 with 3 channels"*"is 16x16 with 3"* ]] ||
    fail "size mismatch: exit $rc, '$err'"
err=$("$imgdiff" "$a" "$tmp/none.png" 2>&1); rc=$?
[ $rc = 1 ] && [ "$err" = "imgdiff: $tmp/none.png: cannot open: No such file or directory" ] ||
    fail "missing file: exit $rc, '$err'"
# The difference image: |A - B| x K. The EXR made brighter by one stop
# (imgconvert) differs from its PNG by the PNG's own values; a PNG differs
# from itself by black.
"$imgconvert" --exposure 1 "$tmp/a.exr" "$tmp/a2.exr" || fail "imgconvert to EXR: exit $?"
"$imgconvert" --exposure -1 "$tmp/a2.exr" "$tmp/a1.exr" || fail "imgconvert back: exit $?"
"$imgdiff" --quiet "$tmp/a.exr" "$tmp/a1.exr" || fail "two stops up and down changed the image"
"$imgdiff" --quiet --diff "$tmp/d.exr" "$tmp/a2.exr" "$tmp/a.exr" && fail "a brighter image matched"
"$imgdiff" --quiet --tolerance 0.002 "$tmp/d.exr" "$tmp/a.exr" || fail "the difference is not A"
"$imgdiff" --quiet --diff "$tmp/z.png" --diff-scale 10 "$a" "$a" || fail "diff of a file with itself"
"$imgconvert" "$tmp/z.png" "$tmp/z.exr" || fail "imgconvert PNG to EXR"
"$imgconvert" --exposure -64 "$a" "$tmp/black.png" || fail "imgconvert --exposure -64"
"$imgdiff" --quiet "$tmp/z.png" "$tmp/black.png" || fail "the difference of a file with itself is not black"
# A viewable PNG of an EXR: the same pixels within 8-bit rounding.
"$imgconvert" "$tmp/a.exr" "$tmp/view.png" || fail "imgconvert EXR to PNG"
"$imgdiff" --quiet --tolerance 0.004 "$tmp/view.png" "$a" || fail "imgconvert changed the pixels"
# A PPM (P6, for Embree's tutorials): its header, three bytes a pixel, the
# PNG's own bytes (so the same through a PNG), black 0 and white 255.
"$imgconvert" "$a" "$tmp/a.ppm" || fail "imgconvert to PPM: exit $?"
[ "$(head -c 13 "$tmp/a.ppm" | od -An -c | tr -d ' \n')" = 'P6\n3232\n255\n' ] || fail "PPM header"
[ "$(stat -c %s "$tmp/a.ppm")" = $((13 + 32 * 32 * 3)) ] || fail "PPM size"
"$imgconvert" "$a" "$tmp/a2.png" &&
    "$imgconvert" "$tmp/a2.png" "$tmp/a2.ppm" || fail "imgconvert round trips"
cmp -s "$tmp/a.ppm" "$tmp/a2.ppm" || fail "a PNG's PPM changed through a PNG"
"$imgconvert" --exposure -64 "$a" "$tmp/black.ppm" && "$imgconvert" --exposure 64 "$a" "$tmp/white.ppm" ||
    fail "imgconvert --exposure to PPM"
[ "$(tail -c +14 "$tmp/black.ppm" | od -An -v -tu1 | tr -s ' ' '\n' | sort -u | tr -d '\n')" = 0 ] ||
    fail "black PPM is not all 0"
[ "$(tail -c +14 "$tmp/white.ppm" | od -An -v -tu1 | tr -s ' ' '\n' | sort -u | tr -d '\n')" = 255 ] ||
    fail "white PPM is not all 255"
err=$("$imgconvert" "$a" "$tmp/x.jpg" 2>&1); rc=$?
[ $rc = 2 ] && [[ $err == *"x.jpg: not a .png, .ppm or .exr name"* ]] || fail "imgconvert to .jpg: $rc '$err'"
err=$("$imgconvert" "$tmp/none.exr" "$tmp/x.png" 2>&1); rc=$?
[ $rc = 1 ] && [[ $err == *"none.exr: cannot open"* ]] || fail "imgconvert of nothing: $rc '$err'"
for args in "" "$a" "--exposure x $a $tmp/y.png" "--exposure 100 $a $tmp/y.png"; do
    # shellcheck disable=SC2086
    "$imgconvert" $args >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] || fail "imgconvert '$args': exit $rc, expected 2"
done
for args in "" "$a" "--tolerance -1 $a $b" "--max-fail x $a $b" "--bogus $a $b" \
    "--diff-scale 0 $a $b"; do
    # shellcheck disable=SC2086
    "$imgdiff" $args >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
done
echo ok
