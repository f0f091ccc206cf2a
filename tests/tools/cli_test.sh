#!/usr/bin/env bash
# Every program in tools/ has the same front end (tools/common/tool.h, or
# render's options for study and render-bench): --help prints its usage on
# stdout and exits 0; --version prints "NAME VERSION" and exits 0; an unknown
# option exits 2 with one line naming it, prefixed with the program's name.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
for prog in "$@"; do
    name=$(basename "$prog")
    [ "$name" = texpaths ] || [ "$name" = texpaths_cli ] && name=texpaths
    out=$("$prog" --help 2>/dev/null) || fail "$name --help: exit $?"
    [[ $out == "usage: "*"$name"* ]] || fail "$name --help: '$(head -1 <<<"$out")'"
    out=$("$prog" --version 2>/dev/null) || fail "$name --version: exit $?"
    [[ $out =~ ^$name\ [0-9]+\.[0-9]+ ]] || fail "$name --version: '$out'"
    err=$("$prog" --no-such-option 2>&1 >/dev/null)
    rc=$?
    [ $rc = 2 ] || fail "$name --no-such-option: exit $rc"
    [[ $(head -1 <<<"$err") == "$name: "*"--no-such-option"* ]] ||
        fail "$name --no-such-option: '$err'"
done
echo "ok: $# programs"
