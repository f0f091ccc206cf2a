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

for args in "" "--bogus $scene" "--spp 0 $scene" "--size 3 $scene" "--target x $scene"; do
    # shellcheck disable=SC2086
    "$script" $args >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
done
echo ok
