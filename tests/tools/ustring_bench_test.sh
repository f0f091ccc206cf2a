#!/usr/bin/env bash
# ustring-bench keeps its contract (docs/design.md): one result line per run in the
# documented format, --scale tables for every strategy, and clear errors with
# exit status 2 for a bad command line. Not a timing test: runs are tiny.
set -u
bench=$1
case_=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
line_re='^ustring-bench lock=(mutex|spin|rwspin|sharded|lockfree) threads=[0-9]+ ops=[0-9]+ secs=[0-9.]+ mops=[0-9.]+$'

case $case_ in
result_lines)
    out=$("$bench" --generate 200 --threads 1,3 --ops 2000 --lock all --repeat 1) || fail "exit $?"
    n=$(grep -cE "$line_re" <<<"$out")
    [ "$n" = 10 ] || fail "expected 10 result lines (5 locks x 2 thread counts), got $n:"$'\n'"$out"
    # ops counts every thread's operations.
    grep -qE '^ustring-bench lock=mutex threads=3 ops=6000 ' <<<"$out" || fail "ops is not the total"
    ;;
strings_file)
    tmp=$(mktemp)
    printf 'a/b.png\nc/d.exr\n\ne/f.tx\n' >"$tmp"
    out=$("$bench" --strings "$tmp" --threads 2 --ops 500 --new-fraction 0.5 --lock rwspin \
          --repeat 1) || fail "exit $?"
    rm -f "$tmp"
    grep -qE '^ustring-bench lock=rwspin threads=2 ops=1000 ' <<<"$out" || fail "got: $out"
    ;;
scale)
    out=$("$bench" --scale --generate 100 --threads 1,4 --ops 500 --repeat 1) || fail "exit $?"
    for w in 'hot lookups' '10% new strings' '100% new strings' 'same string'; do
        grep -q "^$w" <<<"$out" || fail "no table for '$w'"
    done
    for l in mutex spin rwspin sharded lockfree; do
        n=$(grep -cE "^$l +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\$" <<<"$out")
        [ "$n" = 4 ] || fail "expected 4 table rows for $l, got $n:"$'\n'"$out"
    done
    ;;
bad_flags)
    for args in "--threads 0" "--threads x" "--lock nosuch" "--ops -5" "--new-fraction 2" \
                "--bogus" "extra"; do
        # shellcheck disable=SC2086
        err=$("$bench" $args 2>&1 >/dev/null); rc=$?
        [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
        grep -q '^ustring-bench: ' <<<"$err" || grep -q '^usage:' <<<"$err" ||
            fail "'$args': no error message: $err"
    done
    err=$("$bench" --strings /nonexistent/strings.txt 2>&1); rc=$?
    [ $rc = 1 ] || fail "missing file: exit $rc, expected 1"
    [ "$err" = "ustring-bench: /nonexistent/strings.txt: cannot open: No such file or directory" ] ||
        fail "missing file: got '$err'"
    "$bench" --help | grep -q '^usage: ustring-bench' || fail "--help"
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
