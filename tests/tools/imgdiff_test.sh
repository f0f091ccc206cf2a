#!/usr/bin/env bash
# imgdiff: matches, differences, tolerance, failing-pixel budget, size
# mismatch, unreadable files and bad flags (exit 0 / 1 / 2 and one line).
set -u
imgdiff=$1 texgen=$2 maketx=$3
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

# The PNG and its maketx EXR differ only by half-float rounding.
"$imgdiff" --quiet "$a" "$tmp/a.exr" && fail "exact compare of PNG and half EXR passed"
"$imgdiff" --quiet --tolerance 0.002 "$a" "$tmp/a.exr" || fail "PNG vs EXR within 0.002"
n=$("$imgdiff" "$a" "$b" | sed -E 's/.*: ([0-9]+) of.*/\1/')
"$imgdiff" --quiet --max-fail "$n" "$a" "$b" || fail "--max-fail $n should pass"
"$imgdiff" --quiet --max-fail "$((n - 1))" "$a" "$b" && fail "--max-fail $((n - 1)) should fail"

err=$("$imgdiff" "$a" "$small" 2>&1); rc=$?
[ $rc = 1 ] && [[ $err == *"is 32x32 with 3 channels"*"is 16x16 with 3"* ]] ||
    fail "size mismatch: exit $rc, '$err'"
err=$("$imgdiff" "$a" "$tmp/none.png" 2>&1); rc=$?
[ $rc = 1 ] && [ "$err" = "imgdiff: $tmp/none.png: cannot open: No such file or directory" ] ||
    fail "missing file: exit $rc, '$err'"
for args in "" "$a" "--tolerance -1 $a $b" "--max-fail x $a $b" "--bogus $a $b"; do
    # shellcheck disable=SC2086
    "$imgdiff" $args >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
done
echo ok
