#!/usr/bin/env bash
# objgen (tools/gen/objgen.c): each scene has the triangle count it states (in
# its output line, its OBJ header and its `f` lines), render loads it, the
# lambert mesh is closed and wound outward, its MTL is Kd and Ks only, the
# files are the same for a seed and differ between seeds, and bad command
# lines exit 2.
#   objgen_test.sh OBJGEN RENDER IMGSTAT CASE [SCENES_DIR [SEED]]
# (SEED: the build's RT_SCENE_SEED, which made SCENES_DIR's copy; 1 if not given)
set -u
objgen=$1 render=$2 imgstat=$3 case_=$4 scenes=${5:-} seed=${6:-1}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# counts NAME DIR EXPECTED: the three counts agree with EXPECTED; render
# loads the scene and sees something.
counts() {
    local name=$1 dir=$2 want=$3 out n hdr
    out=$("$objgen" "$name" "$dir") || fail "objgen $name: exit $?"
    [[ $out =~ ^objgen\ $name\ triangles=([0-9]+)\ vertices=[0-9]+\ obj=$dir/$name.obj$ ]] ||
        fail "objgen $name: bad line '$out'"
    [ "${BASH_REMATCH[1]}" = "$want" ] || fail "$name: line says ${BASH_REMATCH[1]}, want $want"
    hdr=$(sed -n "1s/^# objgen $name, seed 1: \([0-9]*\) triangles$/\1/p" "$dir/$name.obj")
    [ "$hdr" = "$want" ] || fail "$name: header says '$hdr', want $want"
    n=$(grep -c '^f ' "$dir/$name.obj")
    [ "$n" = "$want" ] || fail "$name: $n f lines, want $want"
    # Every face a triangle: four words.
    awk '/^f / && NF != 4 { exit 1 }' "$dir/$name.obj" || fail "$name: a face is not a triangle"
    # shellcheck disable=SC2046 # the header's camera, as render takes it
    "$render" --quiet --integrator eyelight -r 32 24 -t 2 \
        $(sed -n 's/^# camera: render //p' "$dir/$name.obj") -o "$tmp/$name.exr" \
        "$dir/$name.obj" || fail "render $name: exit $?"
    local mean
    mean=$("$imgstat" "$tmp/$name.exr" | sed 's/.* mean=\([^,]*\),.*/\1/')
    awk -v m="$mean" 'BEGIN { exit !(m > 0.05) }' || fail "render $name: blank image (mean $mean)"
}

case $case_ in
lambert)
    counts lambert "$tmp/l" 69634
    # The mesh (object "mesh") is closed: each undirected edge in exactly
    # two triangles, each directed edge in one (consistent winding); and
    # wound outward: each face's normal points away from the mesh's centre.
    awk '
        /^o / { o = $2 }
        /^v / { nv++; x[nv] = $2; y[nv] = $3; z[nv] = $4; if (o == "mesh") { cx += $2; cy += $3; cz += $4; nm++ } }
        /^f / && o == "mesh" {
            for (i = 1; i <= 3; i++) { split($(i + 1), a, "/"); ix[i] = a[1] }
            for (i = 1; i <= 3; i++) {
                p = ix[i]; q = ix[i % 3 + 1]
                if (directed[p " " q]++) bad_dir++
                undirected[p < q ? p " " q : q " " p]++
            }
            ax = x[ix[2]] - x[ix[1]]; ay = y[ix[2]] - y[ix[1]]; az = z[ix[2]] - z[ix[1]]
            bx = x[ix[3]] - x[ix[1]]; by = y[ix[3]] - y[ix[1]]; bz = z[ix[3]] - z[ix[1]]
            nx = ay * bz - az * by; ny = az * bx - ax * bz; nz = ax * by - ay * bx
            px = (x[ix[1]] + x[ix[2]] + x[ix[3]]) / 3 - cx / nm
            py = (y[ix[1]] + y[ix[2]] + y[ix[3]]) / 3 - cy / nm
            pz = (z[ix[1]] + z[ix[2]] + z[ix[3]]) / 3 - cz / nm
            if (nx * px + ny * py + nz * pz <= 0) inward++
        }
        END {
            for (e in undirected) if (undirected[e] != 2) open++
            if (bad_dir || open || inward) {
                printf "directed twice %d, open edges %d, inward faces %d\n", bad_dir, open, inward
                exit 1
            }
        }' "$tmp/l/lambert.obj" || fail "lambert: the mesh is not closed and wound outward"
    # Lambertian only: newmtl, Kd and Ks 0, nothing else.
    other=$(grep -v -e '^#' -e '^$' -e '^newmtl ' -e '^Kd ' -e '^Ks 0 0 0$' "$tmp/l/lambert.mtl")
    [ -z "$other" ] || fail "lambert.mtl: more than Kd and Ks 0: $other"
    grep -qx 'Kd 0.5 0.5 0.5' "$tmp/l/lambert.mtl" && grep -qx 'Kd 0.4 0.4 0.4' "$tmp/l/lambert.mtl" ||
        fail "lambert.mtl: Kd 0.5 (mesh) and 0.4 (floor) expected"
    ;;
heightfield)
    counts heightfield "$tmp/h" 1280000
    ;;
deterministic)
    "$objgen" --seed 3 lambert "$tmp/a" >/dev/null || fail "objgen seed 3"
    "$objgen" --seed 3 lambert "$tmp/b" >/dev/null || fail "objgen seed 3 again"
    diff -r "$tmp/a" "$tmp/b" >/dev/null || fail "two runs with seed 3 differ"
    "$objgen" --seed 4 lambert "$tmp/c" >/dev/null || fail "objgen seed 4"
    cmp -s "$tmp/a/lambert.obj" "$tmp/c/lambert.obj" && fail "seeds 3 and 4 give the same mesh"
    for args in "" "lambert" "nosuch $tmp/x" "--seed x lambert $tmp/x" "--seed -1 lambert $tmp/x" \
        "--bogus lambert $tmp/x" "lambert $tmp/x extra"; do
        # shellcheck disable=SC2086
        "$objgen" $args >/dev/null 2>&1; rc=$?
        [ $rc = 2 ] || fail "'$args': exit $rc, expected 2"
    done
    : >"$tmp/file"
    err=$("$objgen" lambert "$tmp/file/x" 2>&1); rc=$?
    [ $rc = 1 ] && [[ $err == "objgen: $tmp/file/x: "* ]] || fail "unwritable DIR: exit $rc, '$err'"
    "$objgen" --help | grep -q '^usage: objgen' || fail "--help"
    ;;
built)
    # The build's copy (scenes/CMakeLists.txt) is there, is what this
    # objgen writes with the build's seed (not a stale copy, nor another
    # seed's), and renders something.
    [ -f "$scenes/lambert/lambert.obj" ] || fail "$scenes/lambert/lambert.obj: not generated"
    "$objgen" --seed "$seed" lambert "$tmp/fresh" >/dev/null || fail "objgen --seed $seed lambert"
    for f in lambert.obj lambert.mtl; do
        cmp -s "$tmp/fresh/$f" "$scenes/lambert/$f" || fail "$scenes/lambert/$f: not what objgen writes"
    done
    "$render" --quiet -r 32 24 --spp 1 -o "$tmp/built.exr" "$scenes/lambert/lambert.obj" ||
        fail "render the built lambert scene"
    mean=$("$imgstat" "$tmp/built.exr" | sed 's/.* mean=\([^,]*\),.*/\1/')
    awk -v m="$mean" 'BEGIN { exit !(m > 0.05) }' || fail "the built lambert scene renders blank (mean $mean)"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
echo ok
