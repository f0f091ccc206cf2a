#!/usr/bin/env bash
# The largest textures in bounded memory (docs/reliability.md): a
# 16384x16384 16-bit PNG texture (1.5 GB decoded) renders, and maketx makes
# a tiled EXR of a 16384x16384 8-bit PNG, each under a 1 GiB address-space
# limit: decoded and MIP-mapped in bands, never whole.
#   big_texture_test.sh RENDER TEXGEN MAKETX IMGDIFF CASE [SANITIZER]
set -u
render=$1 texgen=$2 maketx=$3 imgdiff=$4 case_=$5 sanitizer=${6:-}
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
    # Tiled, with MIP levels: the "tiles" attribute (name, NUL, "tiledesc",
    # NUL, its size, then x and y size and the mode) says MIPMAP_LEVELS.
    off=$(grep -aboP 'tiles\x00tiledesc\x00' "$tmp/huge8.exr" | head -1 | cut -d: -f1)
    [ -n "$off" ] || fail "the EXR is not tiled"
    mode=$(od -An -t u1 -j $((off + 19 + 8)) -N 1 "$tmp/huge8.exr" | tr -d ' ')
    [ $((mode & 15)) = 1 ] || fail "the EXR's tiles have level mode $((mode & 15)), not MIPMAP_LEVELS (1)"
    # The EXR is the PNG, MIP levels and all: a triangle over the whole
    # texture, seen at 64x64 (coarse levels) and close (level 0), renders
    # as it does from the PNG itself.
    for t in png exr; do
        printf 'newmtl m\nKd 1 1 1\nmap_Kd huge8.%s\n' $t >"$tmp/$t.mtl"
        printf 'mtllib %s.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nusemtl m\nf 1/1 2/2 3/3\n' \
            $t >"$tmp/$t.obj"
        for view in far:0.3,0.3,1.2 near:0.3,0.3,0.002; do
            "$render" --quiet -t 2 -r 64 64 --integrator albedo --camera-pos "${view#*:}" \
                --look-at 0.3,0.3,0 --max-memory-mb 64 --stats-json "$tmp/$t.json" \
                -o "$tmp/$t-${view%%:*}.exr" "$tmp/$t.obj" || fail "render of the $t: exit $?"
            [ "$(json files_opened "$tmp/$t.json")" = 1 ] && [ "$(json file_errors "$tmp/$t.json")" = 0 ] ||
                fail "the $t texture did not load"
        done
    done
    for view in far near; do
        "$imgdiff" --quiet --tolerance 0.01 "$tmp/png-$view.exr" "$tmp/exr-$view.exr" ||
            fail "$view: the EXR renders otherwise than the PNG it was made from"
    done
    ;;
*)
    fail "unknown case '$case_'"
    ;;
esac
echo ok
