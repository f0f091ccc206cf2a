#!/usr/bin/env bash
# tools/compare/compare-embree-pathtracer keeps its result line (not its speed): a
# tiny run on objgen's lambert scene agrees and prints every field; an
# impossible tolerance stops it with exit 1; bad flags exit 2. Skipped (77)
# without Embree's pathtracer (Debian embree-tools).
#   compare_embree_test.sh SCRIPT BUILD_DIR
set -u
script=$1 build=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v pathtracer >/dev/null || { echo "pathtracer not installed: skipped"; exit 77; }
scene=$build/scenes/lambert/lambert.obj
[ -f "$scene" ] || fail "$scene: not generated"
tiny=(--size 48x36 --ref-spp 64 --spp 2 --repeat 1 --target 0.3)

out=$("$script" "${tiny[@]}" "$scene" "$build" 2>/dev/null) || fail "exit $?: $out"
line=$(grep '^compare-embree-pathtracer ' <<<"$out")
n='([0-9.]+|NaN)'
re="^compare-embree-pathtracer target=0.3 ours_secs=$n embree_secs=$n ratio=$n ours_spp=$n"
re+=" embree_spp=$n ours_interp_secs=$n embree_interp_secs=$n interp_ratio=$n ours_cross_secs=$n"
re+=" embree_cross_secs=$n cross_ratio=$n spp=2 ours_sps=$n embree_sps=$n sps_ratio=$n"
re+=" ref_spp=64 ref_rel_rmse=$n ref_rel_mean=[-+][0-9.]+ agree=yes$"
[[ $line =~ $re ]] || fail "bad result line: '$line'"
[[ $line == *" ours_secs=NaN "* || $line == *" embree_secs=NaN "* ]] &&
    fail "target 0.3 not reached: '$line'"

err=$("$script" "${tiny[@]}" --tolerance-mean 0.000001 "$scene" "$build" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && [[ $err == *"the references disagree"* ]] || fail "disagreement: exit $rc, '$err'"

# Embree reads no PNG: a textured scene's maps reach it as PPM, named by
# '/' paths in its copy of the MTL (a Windows '\' in the original); two
# maps of one file share one conversion.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/scene" && "$build/tools/texgen" --count 1 --size 16 "$tmp/scene/tx" >/dev/null ||
    fail texgen
printf 'newmtl a\nKd 1 1 1\nmap_Kd tx\\tex00.png\nmap_Ka -clamp on tx/tex00.png\n' >"$tmp/scene/t.mtl"
printf 'mtllib t.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nusemtl a\nf 1/1 2/2 3/3\n' \
    >"$tmp/scene/t.obj"
out=$("$script" "${tiny[@]}" --mismatch-ok --keep "$tmp/keep" --camera 0,0,3 "$tmp/scene/t.obj" \
    "$build" 2>/dev/null) || fail "textured scene: exit $?"
[[ $out == *"embree textures: 1 converted to PPM"* ]] || fail "no texture converted: '$out'"
grep -qx 'map_Kd tex/0.ppm' "$tmp/keep/embree/t.mtl" && grep -qx 'map_Ka -clamp on tex/0.ppm' \
    "$tmp/keep/embree/t.mtl" || fail "Embree's MTL: $(cat "$tmp/keep/embree/t.mtl")"
[ "$(head -c 2 "$tmp/keep/embree/tex/0.ppm")" = P6 ] || fail "not a PPM"
grep -q "not supported" "$tmp/keep/embree.log" && fail "Embree still could not read the texture"

for args in "" "--bogus $scene" "--spp 0 $scene" "--size 3 $scene" "--target x $scene"; do
    # shellcheck disable=SC2086
    "$script" $args >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
done
echo ok
