#!/usr/bin/env bash
# Calls inside a folder point one way (docs/design.md, "Layout"): no two
# source files of one folder call each other, nor three in a ring. Read
# from the build's object files: a file's defined functions (nm: T)
# against what it calls (U); tsort(1) finds the loops. A
# file compiled into two targets (a copy library, a generator) counts once;
# an object whose source is gone (renamed since the build folder was made)
# is left out.
# Usage: layout_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src_dir=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "layout: $*" >&2
    exit 1
}

# Each library folder of the project, as the build lays it out.
folders=(ustring texture renderer tools/study tools/bench tools/common tools/img tools/gen
         tools/compare)
nobj=0
for folder in "${folders[@]}"; do
    dir=$build/$folder/CMakeFiles
    [[ $folder != tools/* ]] || dir=$build/tools/obj/${folder#tools/}/CMakeFiles # tools/CMakeLists.txt
    [ -d "$dir" ] || continue
    out=$tmp/$(tr / _ <<<"$folder")
    : >"$out.def" && : >"$out.use"
    while IFS= read -r o; do
        src=$(basename "$o" .o)
        [ -f "$src_dir/$folder/$src" ] || continue
        # An object nm cannot read (an LTO format without its plugin) is
        # no evidence either way: the check is skipped, not passed.
        syms=$(nm "$o" 2>/dev/null) && [ -n "$syms" ] || {
            echo "layout: nm reads nothing of $o; skipped" >&2
            exit 77
        }
        awk -v f="$src" '$2 == "T" { print $3, f }' <<<"$syms" >>"$out.def"
        awk -v f="$src" '$1 == "U" { print $2, f }' <<<"$syms" >>"$out.use"
        nobj=$((nobj + 1))
    done < <(find "$dir" -path '*.dir/*' -name '*.o')
    # Who calls whom, one line per pair of files: "caller callee".
    sort -u "$out.def" >"$out.def.s"
    sort -u "$out.use" >"$out.use.s"
    join "$out.use.s" "$out.def.s" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$out.pairs"
    # A loop of calls: tsort names its files on stderr.
    loop=$(tsort "$out.pairs" 2>&1 >/dev/null | { grep -v 'input contains a loop' || true; } |
        tr -d '\n' | sed 's/tsort: / /g')
    [ -z "$loop" ] || fail "$folder: files that call each other, in a loop:$loop"
done
[ "$nobj" -ge 50 ] || fail "read $nobj object files under $build: is it a build folder?"
echo "layout: $nobj object files, no loop of calls between the files of a folder"
