#!/usr/bin/env bash
# tools/compare/compare-startup keeps its table (not its speed) and its
# errors. Bad flags, a missing binary or scene, and a render that fails stop
# it with a non-zero exit and an error line naming the problem (after
# argparse's usage, for a flag), not a traceback: checked everywhere. A
# 2-round run prints a median line for the build and for Embree's
# pathtracer: checked where Debian's embree-tools is installed, and the
# test is reported skipped (77) where it is not.
#   compare_startup_test.sh SCRIPT RENDER
set -u
script=$1 render=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

one_line_error() { # EXPECTED_TEXT ARGS...
    local want=$1
    shift
    err=$("$script" "$@" 2>&1 >/dev/null)
    rc=$?
    [ $rc -ne 0 ] || fail "$*: exit 0"
    [[ $(tail -n 1 <<<"$err") == "compare-startup: "*"$want"* && $err != *Traceback* ]] ||
        fail "$*: exit $rc, '$err'"
}
scene=$0 # any file that exists: these stop before a scene is read
one_line_error "'0' is not a whole number" --rounds 0 "$render"
one_line_error "'1,2' is not X,Y,Z" --camera 1,2 "$render"
one_line_error "'x' is not a number" --fov x "$render"
one_line_error "/nonexistent/render: not an executable file" --scene "$scene" /nonexistent/render
one_line_error "/nonexistent.obj: missing" --scene /nonexistent.obj "$render"
# A render that fails: /bin/false stands in for a broken build.
one_line_error "/bin/false failed" --rounds 1 --scene "$scene" /bin/false

command -v pathtracer >/dev/null && [ -f /usr/share/doc/embree3/models/cornell_box.obj ] ||
    { echo "errors ok; pathtracer or its cornell box not installed: table skipped"; exit 77; }
out=$("$script" --rounds 2 "$render" 2>&1) || fail "exit $?: $out"
lines=$(grep -E "^ +[0-9.]+ ms +" <<<"$out")
grep -qF -- " 1.000 " <<<"$(grep -F -- "  $render" <<<"$lines")" || fail "no line for render: $out"
grep -qE "^ +[0-9.]+ ms +[0-9.]+ +1\.00x  embree$" <<<"$lines" || fail "no line for embree: $out"
echo "ok"
