#!/usr/bin/env bash
# The path tracer against what must be true: white furnaces, a point light's
# analytic irradiance, the three light-sampling strategies agreeing (and MIS
# the least noisy), one ray for two samples under a uniform sky, error
# falling with samples, and the image independent of threads and tiles.
# Scenes are written here (OBJ, glTF, a constant EXR).
set -u
render=$1 imgstat=$2 texgen=$3 case_=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field NAME LINE: the first number of imgstat's NAME=R,G,B.
field() { sed -n "s/.* $1=\([^,]*\),.*/\1/p" <<<"$2"; }
# near A B TOL: |A - B| <= TOL.
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# plane_gltf NODES ROOTS: a Lambertian plane of 20x20 at y = 0 (albedo 0.5;
# specularFactor 0 leaves it plain Lambert) as nodes[0], then the NODES
# given (JSON, comma-separated), under a point light of 20 cd that any of
# them may hold; ROOTS: the scene's root nodes.
plane_gltf() {
    local b64=AAAgwQAAAAAAACDBAAAgQQAAAAAAACDBAAAgQQAAAAAAACBBAAAgwQAAAAAAACBBAAAAAAAAgD8AAAAAAAAAAAAAgD8AAAAAAAAAAAAAgD8AAAAAAAAAAAAAgD8AAAAAAAACAAEAAAADAAIA
    cat <<GLTF
{"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_lights_punctual", "KHR_materials_specular"],
 "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 20}]}},
 "scene": 0, "scenes": [{"nodes": $2}],
 "nodes": [{"mesh": 0}, $1],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1}, "indices": 2, "material": 0}]}],
 "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.5, 0.5, 1], "metallicFactor": 0,
                "roughnessFactor": 1}, "extensions": {"KHR_materials_specular": {"specularFactor": 0}}}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
                "min": [-10, 0, -10], "max": [10, 0, 10]},
               {"bufferView": 0, "byteOffset": 48, "componentType": 5126, "count": 4, "type": "VEC3"},
               {"bufferView": 1, "componentType": 5123, "count": 6, "type": "SCALAR"}],
 "bufferViews": [{"buffer": 0, "byteLength": 96}, {"buffer": 0, "byteOffset": 96, "byteLength": 12}],
 "buffers": [{"byteLength": 108, "uri": "data:application/octet-stream;base64,$b64"}]}
GLTF
}

# sphere NAME KD KS NS [MTL-LINES]: a UV sphere of radius 1 at the origin.
sphere() {
    printf 'newmtl m\nKd %s %s %s\nKs %s %s %s\nNs %s\n%s' "$2" "$2" "$2" "$3" "$3" "$3" "$4" "${5:-}" \
        >"$tmp/$1.mtl"
    awk -v mtl="$1.mtl" 'BEGIN { pi = 3.14159265358979; nu = 96; nv = 48
      print "mtllib " mtl; print "usemtl m"
      for (j = 0; j <= nv; j++) for (i = 0; i <= nu; i++) {
        th = pi * j / nv; ph = 2 * pi * i / nu
        x = sin(th) * cos(ph); y = cos(th); z = sin(th) * sin(ph)
        printf "v %.6f %.6f %.6f\nvn %.6f %.6f %.6f\n", x, y, z, x, y, z }
      for (j = 0; j < nv; j++) for (i = 0; i < nu; i++) {
        a = j * (nu + 1) + i + 1; b = a + 1; c = a + nu + 1; d = c + 1
        printf "f %d//%d %d//%d %d//%d\nf %d//%d %d//%d %d//%d\n", a, a, c, c, b, b, b, b, c, c, d, d }
    }' >"$tmp/$1.obj"
}

# A ground of two halves (diffuse, glossy metal) under an emissive quad.
lit_scene() {
    cat >"$tmp/lit.mtl" <<'MTL'
newmtl matte
Kd 0.5 0.5 0.5
Ks 0 0 0
newmtl gloss
Kd 0.9 0.9 0.9
Ks 1 1 1
Pm 1
Pr 0.4
newmtl lamp
Kd 0 0 0
Ks 0 0 0
Ke 4 4 4
MTL
    cat >"$tmp/lit.obj" <<'OBJ'
mtllib lit.mtl
v -4 0 -4
v -4 0 4
v 0 0 4
v 0 0 -4
v 4 0 4
v 4 0 -4
v -1.5 2 -1.5
v 1.5 2 -1.5
v 1.5 2 1.5
v -1.5 2 1.5
vn 0 1 0
vn 0 -1 0
usemtl matte
f 1//1 2//1 3//1
f 1//1 3//1 4//1
usemtl gloss
f 4//1 3//1 5//1
f 4//1 5//1 6//1
usemtl lamp
f 7//2 8//2 9//2
f 7//2 9//2 10//2
OBJ
}
lit() { # spp strategy out
    "$render" --quiet -t 2 -r 32 24 --integrator path --spp "$1" --light-sampling "$2" \
        --camera-pos 0,5,6 --look-at 0,0,0 --fov 50 -o "$3" "$tmp/lit.obj" || fail "lit $2: exit $?"
}

case $case_ in
furnace)
    # Inside a uniform white environment a white object is invisible: every
    # bounce returns all the light, at every roughness and metallic; with
    # albedo 0.5 (plain Lambert), half.
    "$texgen" --constant 1 --size 64 "$tmp" >/dev/null || fail texgen
    sphere white 1 0 10
    sphere grey 0.5 0 10
    for r in 0.1 0.5 1.0; do sphere "metal$r" 1 1 10 "Pm 1
Pr $r
"; done
    sphere gloss 1 1 10 "Pm 0
Pr 0.3
"
    for s in white:1 grey:0.5 metal0.1:1 metal0.5:1 metal1.0:1 gloss:1; do
        name=${s%%:*} want=${s#*:}
        "$render" --quiet -t 2 -r 32 32 --spp 64 --integrator path --envmap "$tmp/constant.exr" \
            --camera-pos 0,0,4 --look-at 0,0,0 --fov 30 -o "$tmp/$name.exr" "$tmp/$name.obj" ||
            fail "$name: exit $?"
        out=$("$imgstat" --window 10,10,22,22 "$tmp/$name.exr")
        mean=$(field mean "$out")
        near "$mean" "$want" 0.01 || fail "$name: furnace mean $mean, want $want ($out)"
    done
    ;;
point_light)
    # A Lambertian plane (albedo 0.5) under a point light of 20 cd at height
    # 2: L = 0.5 / pi * 20 * h / (h^2 + r^2)^1.5, checked at pixel centres
    # along the middle row (one sample per pixel is its centre).
    plane_gltf '{"translation": [0, 2, 0], "extensions": {"KHR_lights_punctual": {"light": 0}}}' \
        '[0, 1]' >"$tmp/plane.gltf"
    "$render" --quiet -t 2 -r 65 65 --integrator path --camera-pos 0,10,0 --look-at 0,0,0 \
        --fov 60 -o "$tmp/plane.exr" "$tmp/plane.gltf" || fail "exit $?"
    for x in 32 36 40 48 56; do
        got=$(field mean "$("$imgstat" --window $x,32,$((x + 1)),33 "$tmp/plane.exr")")
        want=$(awk -v x=$x 'BEGIN { t = sin(3.14159265358979 / 6) / cos(3.14159265358979 / 6)
            r = 10 * (2 * (x + 0.5) / 65 - 1) * t; h = 2
            printf "%.6f", 0.5 / 3.14159265358979 * 20 * h / (h * h + r * r) ^ 1.5 }')
        near "$got" "$want" "$(awk -v w="$want" 'BEGIN { print 0.003 * w }')" ||
            fail "pixel $x,32: $got, analytic $want"
    done
    ;;
light_instances)
    # One light definition named by two nodes is two lights (assimp 5.2
    # makes one, at the last node): one at (-3, 2, 0), one at (3, 2, 0)
    # through a parent's translation. Without the second node's branch,
    # one light, and the plane under it goes dark.
    lamp='"extensions": {"KHR_lights_punctual": {"light": 0}}'
    nodes="{\"translation\": [-3, 2, 0], $lamp}, {\"translation\": [3, 0, 0], \"children\": [3]},
 {\"translation\": [0, 2, 0], $lamp}"
    plane_gltf "$nodes" '[0, 1, 2]' >"$tmp/two.gltf"
    plane_gltf "$nodes" '[0, 1]' >"$tmp/one.gltf"
    # analytic X-PIXEL LIGHT-X...: L at the pixel's centre on the middle row
    # (looking straight down, the image's x runs along the world's -x).
    analytic() {
        awk -v x="$1" -v l="${*:2}" 'BEGIN { t = sin(3.14159265358979 / 6) / cos(3.14159265358979 / 6)
            px = -10 * (2 * (x + 0.5) / 65 - 1) * t; h = 2; n = split(l, lx, " ")
            for (i = 1; i <= n; i++) { r = px - lx[i]; e += 20 * h / (h * h + r * r) ^ 1.5 }
            printf "%.6f", 0.5 / 3.14159265358979 * e }'
    }
    for s in two one; do
        "$render" --quiet -t 2 -r 65 65 --integrator path --camera-pos 0,10,0 --look-at 0,0,0 \
            --fov 60 --stats-json "$tmp/$s.json" -o "$tmp/$s.exr" "$tmp/$s.gltf" || fail "$s: exit $?"
    done
    [ "$(jq .scene.lights "$tmp/two.json")" = 2 ] || fail "two nodes: $(jq .scene.lights "$tmp/two.json") lights"
    [ "$(jq .scene.lights "$tmp/one.json")" = 1 ] || fail "one node: $(jq .scene.lights "$tmp/one.json") lights"
    for x in 15 32 49; do
        for s in two one; do
            got=$(field mean "$("$imgstat" --window $x,32,$((x + 1)),33 "$tmp/$s.exr")")
            # shellcheck disable=SC2046
            want=$(analytic $x -3 $([ $s = two ] && echo 3))
            near "$got" "$want" "$(awk -v w="$want" 'BEGIN { print 0.01 * w }')" ||
                fail "$s: pixel $x,32: $got, analytic $want"
        done
    done
    ;;
mis)
    # Light sampling, BSDF sampling and their combination converge to the
    # same image; MIS is the closest at equal samples on a scene that has
    # both a matte and a glossy half.
    lit_scene
    lit 1024 mis "$tmp/ref.exr"
    ref_mean=$(field mean "$("$imgstat" "$tmp/ref.exr")")
    for s in mis light bsdf; do
        # The mean at enough samples that a strategy's rare large samples
        # (light sampling of the glossy half) are in it; the error at few.
        lit 256 $s "$tmp/$s.exr"
        mean=$(field mean "$("$imgstat" "$tmp/$s.exr")")
        near "$mean" "$ref_mean" "$(awk -v m="$ref_mean" 'BEGIN { print 0.02 * m }')" ||
            fail "$s: mean $mean, reference $ref_mean"
        lit 16 $s "$tmp/$s.exr"
        eval "rmse_$s=$(field rmse "$("$imgstat" "$tmp/$s.exr" "$tmp/ref.exr")")"
    done
    # shellcheck disable=SC2154
    awk -v m="$rmse_mis" -v l="$rmse_light" -v b="$rmse_bsdf" 'BEGIN { exit !(m < l && m < b) }' ||
        fail "MIS is not the least noisy: rmse mis $rmse_mis, light $rmse_light, bsdf $rmse_bsdf"
    ;;
sky)
    # Under a uniform sky as the only light, a Lambertian bounce traces one
    # ray for its light sample and its BSDF sample (renderer/path.c,
    # one_ray_at). With glossy bounces between matte ones (the lamp of the
    # lit scene made a matte ceiling), at one bounce (the last ray is an
    # occlusion test) and at six (the roulette waits for that ray), MIS must
    # agree with light sampling alone and BSDF sampling alone, and trace
    # fewer rays than either (camera rays and glossy bounces included).
    lit_scene
    sed -i 's/^Kd 0 0 0$/Kd 0.8 0.8 0.8/; s/^Ke 4 4 4$/Ke 0 0 0/' "$tmp/lit.mtl"
    "$texgen" --constant 1 --size 64 "$tmp" >/dev/null || fail texgen
    for depth in 1 6; do
        for s in mis light bsdf; do
            "$render" --quiet -t 2 -r 32 24 --integrator path --spp 256 --light-sampling $s \
                --max-depth $depth --envmap "$tmp/constant.exr" --camera-pos 0,5,6 \
                --look-at 0,0,0 --fov 50 --stats-json "$tmp/$s.json" -o "$tmp/$s.exr" \
                "$tmp/lit.obj" || fail "sky $s: exit $?"
            eval "mean_$s=$(field mean "$("$imgstat" "$tmp/$s.exr")")"
            eval "rays_$s=$(jq .rays "$tmp/$s.json")"
        done
        # shellcheck disable=SC2154
        for s in light bsdf; do
            eval "m=\$mean_$s"
            near "$mean_mis" "$m" "$(awk -v m="$m" 'BEGIN { print 0.01 * m }')" ||
                fail "max depth $depth: mis mean $mean_mis, $s $m"
        done
        # shellcheck disable=SC2154
        awk -v m="$rays_mis" -v l="$rays_light" -v b="$rays_bsdf" \
            'BEGIN { exit !(m > 0 && m < 0.9 * l && m < 0.9 * b) }' ||
            fail "max depth $depth: mis traced $rays_mis rays, light $rays_light, bsdf $rays_bsdf"
    done
    ;;
convergence)
    # The error against a high-sample reference falls at least as fast as
    # 1 / sqrt(spp): 16 times the samples, at least 3 times less error.
    lit_scene
    lit 2048 mis "$tmp/ref.exr"
    lit 4 mis "$tmp/a.exr"
    lit 64 mis "$tmp/b.exr"
    ea=$(field rmse "$("$imgstat" "$tmp/a.exr" "$tmp/ref.exr")")
    eb=$(field rmse "$("$imgstat" "$tmp/b.exr" "$tmp/ref.exr")")
    awk -v a="$ea" -v b="$eb" 'BEGIN { exit !(b > 0 && a / b >= 3) }' ||
        fail "error at 4 spp $ea, at 64 spp $eb: not falling as 1/sqrt(spp)"
    ;;
bad_samples)
    # An emitter of infinite radiance: it was every sample's that saw it
    # not finite, each dropped (counted as bad samples). Now its emission is
    # brought to RT_MAX_RADIANCE as it loads: no sample is lost, and the
    # image is finite and lit, with no warning of samples left out.
    printf 'newmtl hot\nKd 0.5 0.5 0.5\nKe inf inf inf\n' >"$tmp/hot.mtl"
    printf 'mtllib hot.mtl\nv -1 -1 0\nv 1 -1 0\nv 0 1 0\nusemtl hot\nf 1 2 3\n' >"$tmp/hot.obj"
    err=$("$render" -t 2 -r 16 16 --spp 4 --stats-json "$tmp/hot.json" -o "$tmp/hot.exr" \
        "$tmp/hot.obj" 2>&1 >/dev/null) || fail "exit $?"
    [[ $err == *"not finite"* ]] && fail "samples said left out: $err"
    [ "$(jq .bad_samples "$tmp/hot.json")" = 0 ] || fail "bad samples: $(jq .bad_samples "$tmp/hot.json")"
    out=$("$imgstat" "$tmp/hot.exr")
    [[ $(field max "$out") =~ ^[0-9.]+(e[-+]?[0-9]+)?$ ]] || fail "not finite: $out"
    [ "$(field max "$out")" != 0 ] || fail "black: $out"
    ;;
determinism)
    lit_scene
    "$render" --quiet -t 1 -r 32 24 --integrator path --spp 4 -o "$tmp/t1.exr" "$tmp/lit.obj" ||
        fail "-t 1"
    for args in "-t 2" "-t 7 --tile 5" "-t 3 --tile 16"; do
        # shellcheck disable=SC2086
        "$render" --quiet $args -r 32 24 --integrator path --spp 4 -o "$tmp/t.exr" "$tmp/lit.obj" ||
            fail "$args"
        out=$("$imgstat" "$tmp/t.exr" "$tmp/t1.exr")
        [ "$(field rmse "$out")" = 0 ] || fail "'$args' differs from -t 1: $out"
    done
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
