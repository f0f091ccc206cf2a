#!/usr/bin/env bash
# The generated scenes (scenes/CMakeLists.txt, tools/gen/scenegen.c): scenegen is
# deterministic for a seed, render reads each scene, the many-textures scene
# makes five lookups per shading point over at least 200 files, and the UDIM
# scene's tiles resolve.
set -u
scenegen=$1 render=$2 scenes=$3 case_=$4 imgstat=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json() { jq -r --arg k "$1" 'first(.. | objects | select(has($k)) | .[$k])' "$2"; }

case $case_ in
deterministic)
    for name in default udim; do
        "$scenegen" --seed 3 "$name" "$tmp/a" >/dev/null || fail "scenegen $name"
        "$scenegen" --seed 3 "$name" "$tmp/b" >/dev/null || fail "scenegen $name again"
        diff -r "$tmp/a" "$tmp/b" >/dev/null || fail "$name: two runs with seed 3 differ"
        "$scenegen" --seed 4 "$name" "$tmp/c" >/dev/null || fail "scenegen $name seed 4"
        diff -r "$tmp/a" "$tmp/c" >/dev/null && fail "$name: seeds 3 and 4 give the same files"
        rm -rf "$tmp/a" "$tmp/b" "$tmp/c"
    done
    "$scenegen" nosuch "$tmp/x" 2>/dev/null; [ $? -eq 2 ] || fail "unknown scene: want exit 2"
    ;;
render_default | render_many-textures | render_udim)
    # The scene as a user first renders it (defaults: path tracer, its own
    # camera): every texture found, the subject fills much of the view, and
    # the PNG holds a lit, varied picture, not black, white or one colour.
    name=${case_#render_}
    scene=$scenes/$name/$name.gltf
    [ -f "$scene" ] || fail "$scene: not generated (build the 'scenes' target)"
    "$render" --quiet -r 64 48 --stats-json "$tmp/s.json" -o "$tmp/out.png" "$scene" ||
        fail "render $name"
    [ "$(json file_errors "$tmp/s.json")" = 0 ] && [ "$(json lookup_errors "$tmp/s.json")" = 0 ] ||
        fail "$name: textures missing: file_errors $(json file_errors "$tmp/s.json")"
    [ "$(json lookups "$tmp/s.json")" -gt 0 ] || fail "$name: no texture lookups"
    hits=$(json shading_points "$tmp/s.json")
    [ "$hits" -ge $((64 * 48 / 3)) ] || fail "$name: geometry on $hits of $((64 * 48)) pixels"
    stat=$("$imgstat" "$tmp/out.png") || fail "$name: the PNG does not read back"
    awk -v s="$stat" 'BEGIN { split(s, f, " "); split(f[3], m, "[=,]"); split(f[4], d, "[=,]")
        mean = (m[2] + m[3] + m[4]) / 3; sd = (d[2] + d[3] + d[4]) / 3
        exit !(mean > 0.02 && mean < 0.9 && sd > 0.02) }' || fail "$name: a flat image: $stat"
    ;;
many_textures_stats)
    scene=$scenes/many-textures/many-textures.gltf
    "$render" --quiet -r 320 240 --spp 1 --stats-json "$tmp/s.json" -o "$tmp/out.exr" "$scene" ||
        fail "render many-textures"
    points=$(json shading_points "$tmp/s.json") lookups=$(json lookups "$tmp/s.json")
    files=$(json files_opened "$tmp/s.json") errors=$(json file_errors "$tmp/s.json")
    [ "$points" -gt 0 ] || fail "no shading points"
    [ "$lookups" -ge $((5 * points)) ] || fail "lookups $lookups < 5 x $points shading points"
    [ "$files" -ge 200 ] || fail "files_opened $files < 200"
    [ "$errors" -eq 0 ] || fail "file_errors $errors"
    ;;
udim_stats)
    scene=$scenes/udim/udim.gltf
    "$render" --quiet -r 160 120 --spp 1 --stats-json "$tmp/s.json" -o "$tmp/out.exr" "$scene" ||
        fail "render udim"
    files=$(json files_opened "$tmp/s.json") errors=$(json file_errors "$tmp/s.json")
    lerr=$(json lookup_errors "$tmp/s.json")
    [ "$files" -ge 4 ] || fail "files_opened $files < 4 UDIM tiles"
    [ "$errors" -eq 0 ] && [ "$lerr" -eq 0 ] || fail "file_errors $errors, lookup_errors $lerr"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
exit 0
