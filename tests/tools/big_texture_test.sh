#!/usr/bin/env bash
# The largest textures in bounded memory (docs/reliability.md): a
# 16384x16384 16-bit PNG texture (1.5 GB decoded) renders, and maketx makes
# a tiled EXR of a 16384x16384 8-bit PNG, each under a 1 GiB address-space
# limit: decoded and MIP-mapped in bands, never whole.
#   big_texture_test.sh RENDER TEXGEN MAKETX CASE [SANITIZER]
set -u
render=$1 texgen=$2 maketx=$3 case_=$4 sanitizer=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ -n "$sanitizer" ]; then
    echo "skipped: a sanitizer reserves terabytes of address space"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit_kib=1048576
json() { jq -r --arg k "$1" 'first(.. | objects | select(has($k)) | .[$k])' "$2"; }

case $case_ in
render)
    "$texgen" --huge 16 "$tmp" || fail "texgen: exit $?"
    printf 'newmtl m\nKd 1 1 1\nmap_Kd huge16.png\n' >"$tmp/s.mtl"
    printf 'mtllib s.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nusemtl m\nf 1/1 2/2 3/3\n' \
        >"$tmp/s.obj"
    # 64x64 pixels over the whole texture: the coarse levels are read, so
    # every level was built.
    (
        ulimit -v $limit_kib
        "$render" --quiet -t 2 -r 64 64 --camera-pos 0.3,0.3,1.2 --look-at 0.3,0.3,0 \
            --max-memory-mb 16 --stats-json "$tmp/s.json" -o "$tmp/o.png" "$tmp/s.obj"
    ) 2>"$tmp/err" || fail "render under ulimit -v $limit_kib: exit $?: $(cat "$tmp/err")"
    [ ! -s "$tmp/err" ] || fail "render said: $(cat "$tmp/err")"
    [ "$(json files_opened "$tmp/s.json")" = 1 ] || fail "the texture was not opened"
    [ "$(json file_errors "$tmp/s.json")" = 0 ] || fail "the texture failed"
    rss=$(($(json peak_rss "$tmp/s.json") >> 20))
    echo "peak RSS $rss MiB"
    [ "$rss" -lt 256 ] || fail "peak RSS $rss MiB: the texture was held whole?"
    ;;
maketx)
    "$texgen" --huge 8 "$tmp" || fail "texgen: exit $?"
    (
        ulimit -v $limit_kib
        "$maketx" -o "$tmp/huge8.exr" "$tmp/huge8.png"
    ) || fail "maketx under ulimit -v $limit_kib: exit $?"
    [ -s "$tmp/huge8.exr" ] || fail "no output"
    ls "$tmp" | grep -q tmp && fail "a temporary file was left: $(ls "$tmp")"
    ;;
*)
    fail "unknown case '$case_'"
    ;;
esac
echo ok
