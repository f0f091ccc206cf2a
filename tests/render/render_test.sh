#!/usr/bin/env bash
# render, end to end: identical images for any thread count and tile size,
# the texture modes' accounting, the shared test-data scenes, and bad input
# (one clear line, the right exit status, no output clobbered).
set -u
render=$1 imgdiff=$2 texgen=$3 case_=$4 testdata=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A small textured scene: two quads with a texgen texture, as OBJ + MTL.
"$texgen" --count 1 --size 64 "$tmp/tex" >/dev/null || fail texgen
cat >"$tmp/scene.mtl" <<MTL
newmtl bricks
Kd 1 1 1
map_Kd tex/tex00.png
newmtl missing
Kd 0.5 0.5 0.5
map_Kd tex/nosuch.png
MTL
cat >"$tmp/scene.obj" <<OBJ
mtllib scene.mtl
v -1 -1 0
v 1 -1 0
v 1 1 0
v -1 1 0
v -1 -1 -1
v 1 -1 -1
v 1 -1 1
v -1 -1 1
vt 0 0
vt 2 0
vt 2 2
vt 0 2
vn 0 0 1
vn 0 1 0
usemtl bricks
f 1/1/1 2/2/1 3/3/1
f 1/1/1 3/3/1 4/4/1
usemtl missing
f 5/1/2 6/2/2 7/3/2
f 5/1/2 7/3/2 8/4/2
OBJ
scene=$tmp/scene.obj
json() { jq -r --arg k "$1" 'first(.. | objects | select(has($k)) | .[$k])' "$2"; }
# A glTF of one triangle (mesh 0): tri_gltf SCENE-NODES NODES [BUFFER] [MEMBERS]: the
# scene's node list, the "nodes" array, its one buffer (default: the
# triangle inline) and more top-level members.
tri_gltf() {
    local b64=AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA # 3 float32 vertices
    local buffer=${3:-"{\"byteLength\": 36, \"uri\": \"data:application/octet-stream;base64,$b64\"}"}
    printf '{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": %s}], "nodes": %s,
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                "min": [0, 0, 0], "max": [1, 1, 0]}],
 "bufferViews": [{"buffer": 0, "byteLength": 36}], "buffers": [%s]%s}\n' "$1" "$2" "$buffer" "${4:+, $4}"
}
# quad_scene PNG FILE: a quad textured with PNG, twice: FILE.glb holds the
# image in its BIN chunk (an embedded texture), FILE.gltf reads it by name
# (a copy beside it; its buffer FILE.bin).
quad_scene() {
    local f='\x00\x00\x80\xbf' o='\x00\x00\x80\x3f' z='\x00\x00\x00\x00' n size
    local tris='\x00\x00\x01\x00\x02\x00\x00\x00\x02\x00\x03\x00' # 0 1 2, 0 2 3 as uint16
    le32() { printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
    n=$(wc -c <"$1")
    size=$(((92 + n + 3) / 4 * 4)) # positions, UVs, indices, the image
    quad_json() { # IMAGE BUFFER-MEMBERS
        printf '{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2, "material": 0}]}],
 "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
 "textures": [{"source": 0}], "images": [%s],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, 0], "max": [1, 1, 0]},
  {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
  {"bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR"}],
 "bufferViews": [{"buffer": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 32},
  {"buffer": 0, "byteOffset": 80, "byteLength": 12}, {"buffer": 0, "byteOffset": 92, "byteLength": %d}],
 "buffers": [{"byteLength": %d%s}]}' "$1" "$n" "$size" "$2"
    }
    [ "$(dirname "$1")" -ef "$(dirname "$2")" ] || cp "$1" "$(dirname "$2")/"
    { printf "$f$f$z$o$f$z$o$o$z$f$o$z$z$o$o$o$o$z$z$z$tris"; cat "$1"; head -c $((size - 92 - n)) /dev/zero; } >"$2.bin"
    quad_json "{\"uri\": \"$(basename "$1")\"}" ", \"uri\": \"$(basename "$2").bin\"" >"$2.gltf"
    quad_json '{"bufferView": 3, "mimeType": "image/png"}' '' >"$2.json"
    n=$(wc -c <"$2.json")
    printf '%*s' $(((4 - n % 4) % 4)) '' >>"$2.json" # chunks are 4-byte aligned
    n=$(wc -c <"$2.json")
    {
        printf "glTF$(le32 2)$(le32 $((12 + 8 + n + 8 + size)))$(le32 "$n")JSON"
        cat "$2.json"
        printf "$(le32 "$size")BIN\\x00"
        cat "$2.bin"
    } >"$2.glb"
}

case $case_ in
determinism)
    # Camera rays go to Embree in 4x2 packets aligned to the image; tiles of
    # 5 and 7 pixels cut those blocks, and every integrator must not care.
    for integrator in path eyelight ao; do
        in="--integrator $integrator"
        # shellcheck disable=SC2086
        "$render" --quiet $in -t 1 -r 96 64 --spp 2 -o "$tmp/t1.exr" "$scene" 2>/dev/null ||
            fail "$in -t 1"
        for args in "-t 2" "-t 7" "-t 2 --tile 16" "-t 3 --tile 5" "-t 2 --tile 7" \
            "-t 2 --ustring-lock mutex" "-t 2 --open-textures lazy"; do
            # shellcheck disable=SC2086
            "$render" --quiet $in $args -r 96 64 --spp 2 -o "$tmp/t.exr" "$scene" 2>/dev/null ||
                fail "$in $args"
            "$imgdiff" "$tmp/t1.exr" "$tmp/t.exr" >/dev/null || fail "'$in $args' differs from -t 1"
        done
    done
    ;;
modes)
    # Eyelight: one shading point per camera hit in every mode (a path's
    # length depends on what the textures say, so full and bypass differ).
    modes() { "$render" --integrator eyelight "$@"; }
    modes --quiet -t 2 -r 48 32 --stats-json "$tmp/full.json" -o "$tmp/a.exr" "$scene" 2>/dev/null ||
        fail "full: exit $?"
    modes --quiet -t 2 -r 48 32 --bypass-texture --stats-json "$tmp/bypass.json" \
        -o "$tmp/b.exr" "$scene" 2>/dev/null || fail "bypass: exit $?"
    modes --quiet -t 2 -r 48 32 --early-out --stats-json "$tmp/early.json" \
        -o "$tmp/c.exr" "$scene" 2>/dev/null || fail "early-out: exit $?"
    modes --quiet -t 2 -r 48 32 --intern once --stats-json "$tmp/once.json" \
        -o "$tmp/d.exr" "$scene" 2>/dev/null || fail "intern once: exit $?"
    l=$(json lookups "$tmp/full.json") i=$(json interns "$tmp/full.json")
    [ "$l" -gt 0 ] && [ "$i" = "$l" ] || fail "per-lookup: $i interns for $l lookups"
    [ "$(json lookups "$tmp/bypass.json")" = 0 ] || fail "bypass made lookups"
    [ "$(json interns "$tmp/bypass.json")" = "$l" ] || fail "bypass must intern once per slot"
    [ "$(json tiles_loaded "$tmp/bypass.json")" = 0 ] && [ "$(json tiles_kept "$tmp/bypass.json")" = 0 ] ||
        fail "bypass brought a texture tile in"
    [ "$(json files_opened "$tmp/bypass.json")" = 0 ] || fail "bypass opened a texture file"
    [ "$(json files_opened "$tmp/early.json")" = 0 ] || fail "early-out opened a texture file"
    # Full texturing opens the scene's one readable file up front, once.
    [ "$(json files_opened "$tmp/full.json")" = 1 ] || fail "full: files_opened != 1"
    [ "$(json interns "$tmp/early.json")" = 0 ] || fail "early-out interned"
    [ "$(json early_outs "$tmp/early.json")" = "$l" ] || fail "early-outs != lookups"
    [ "$(json interns "$tmp/once.json")" = 0 ] || fail "--intern once interned per lookup"
    [ "$(json lookups "$tmp/once.json")" = "$l" ] || fail "--intern once: lookups differ"
    "$imgdiff" "$tmp/a.exr" "$tmp/d.exr" >/dev/null || fail "--intern once changed the image"
    # The path tracer keeps the same accounting: every lookup interned, no
    # file read unless full, nothing interned on early-out.
    for m in full bypass early; do
        flag=$([ $m = bypass ] && echo --bypass-texture; [ $m = early ] && echo --early-out)
        # shellcheck disable=SC2086
        "$render" --quiet -t 2 -r 24 16 --spp 2 $flag --stats-json "$tmp/p$m.json" \
            -o "$tmp/p.exr" "$scene" 2>/dev/null || fail "path $m: exit $?"
    done
    pl=$(json lookups "$tmp/pfull.json")
    [ "$pl" -gt 0 ] && [ "$(json interns "$tmp/pfull.json")" = "$pl" ] || fail "path: interns != lookups"
    [ "$(json lookups "$tmp/pbypass.json")" = 0 ] && [ "$(json interns "$tmp/pbypass.json")" -gt 0 ] &&
        [ "$(json files_opened "$tmp/pbypass.json")" = 0 ] || fail "path bypass read or skipped interning"
    [ "$(json interns "$tmp/pearly.json")" = 0 ] && [ "$(json early_outs "$tmp/pearly.json")" -gt 0 ] ||
        fail "path early-out interned"
    ;;
eyelight_flat)
    # Eyelight shades lanes whose material names no texture eight at a time;
    # each pixel must get the bits the one-lane path gives. --bypass-texture
    # returns a textured slot's constant, so the same materials with texture
    # names take the one-lane path to the same colours: all three images
    # must be identical, mixed packets included. Normals differ per vertex
    # and are not unit length, so interpolating and normalising count.
    mtl() { # mtl FILE TEXTURE-A TEXTURE-B: two materials, each map_Kd if given
        printf 'newmtl a\nKd 0.8 0.6 0.4\nKe 0.1 0.05 0\n%s\nnewmtl b\nKd 0.3 0.5 0.7\n%s\n' \
            "${2:+map_Kd $2}" "${3:+map_Kd $3}" >"$tmp/$1"
    }
    mtl all.mtl tex/tex00.png tex/nosuch.png
    mtl none.mtl "" ""
    mtl mixed.mtl tex/tex00.png ""
    for m in all none mixed; do
        printf 'mtllib %s.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nv 0 0 0.5\n' "$m" >"$tmp/$m.obj"
        printf 'vn 0.3 -0.2 2\nvn -0.5 0.1 0.7\nvn 0.2 0.6 1.5\nvn -0.1 -0.4 0.9\nvn 0 0 1\n' >>"$tmp/$m.obj"
        printf 'usemtl a\nf 1//1 2//2 5//5\nf 2//2 3//3 5//5\nusemtl b\nf 3//3 4//4 5//5\nf 4//4 1//1 5//5\n' \
            >>"$tmp/$m.obj"
        "$render" --quiet --integrator eyelight -t 2 -r 61 47 --spp 2 --bypass-texture \
            --stats-json "$tmp/$m.json" -o "$tmp/$m.exr" "$tmp/$m.obj" 2>/dev/null || fail "$m: exit $?"
    done
    [ "$(json interns "$tmp/all.json")" -gt 0 ] || fail "the textured materials interned nothing"
    [ "$(json interns "$tmp/none.json")" = 0 ] || fail "untextured materials interned"
    [ "$(json shading_points "$tmp/none.json")" -gt 1000 ] || fail "too few shading points"
    for m in none mixed; do
        [ "$(json shading_points "$tmp/$m.json")" = "$(json shading_points "$tmp/all.json")" ] ||
            fail "$m: shading points differ"
        "$imgdiff" "$tmp/all.exr" "$tmp/$m.exr" >/dev/null || fail "$m: pixels differ from the one-lane path"
    done
    ;;
exact_command)
    # The issue's command, exactly as a user types it (output: render.exr
    # in the current folder), and a PLY scene.
    (cd "$tmp" && "$render" -t 24 --bypass-texture scene.obj 2>/dev/null) || fail "exit $?"
    # The same render, its output named: render.exr must be that image (the
    # default name, format and size), not merely a readable file.
    "$render" --quiet -t 24 --bypass-texture -o "$tmp/named.exr" "$tmp/scene.obj" ||
        fail "-o named.exr: exit $?"
    "$imgdiff" --quiet --tolerance 0 "$tmp/named.exr" "$tmp/render.exr" ||
        fail "render.exr is not the render the same options write with -o"
    printf 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n' >"$tmp/tri.ply"
    "$render" --quiet -t 2 -r 32 32 --stats-json "$tmp/ply.json" -o "$tmp/ply.png" "$tmp/tri.ply" ||
        fail "PLY: exit $?"
    [ "$(json shading_points "$tmp/ply.json")" -gt 0 ] || fail "PLY: nothing hit"
    ;;
cutout)
    # An OBJ map_d cuts its surface out where the map is under 0.5, for
    # camera rays and shadow rays alike: a red quad in front of a white one,
    # with an opacity map of 0 (gone) and of 1 (there).
    for v in 0 1; do
        mkdir -p "$tmp/o$v"
        "$texgen" --constant $v --size 16 "$tmp/o$v" >/dev/null || fail texgen
        cat >"$tmp/cut$v.mtl" <<MTL
newmtl front
Kd 1 0 0
map_d o$v/constant.exr
newmtl back
Kd 1 1 1
MTL
        cat >"$tmp/cut$v.obj" <<OBJ
mtllib cut$v.mtl
v -1 -1 0
v 1 -1 0
v 1 1 0
v -1 1 0
v -3 -3 -2
v 3 -3 -2
v 3 3 -2
v -3 3 -2
vt 0 0
vt 1 0
vt 1 1
vt 0 1
usemtl front
f 1/1 2/2 3/3
f 1/1 3/3 4/4
usemtl back
f 5/1 6/2 7/3
f 5/1 7/3 8/4
OBJ
        for integrator in albedo path; do
            "$render" --quiet -t 2 -r 17 17 --integrator $integrator --camera-pos 0,0,5 \
                --look-at 0,0,0 --fov 20 -o "$tmp/cut$v-$integrator.png" "$tmp/cut$v.obj" ||
                fail "cut$v $integrator: exit $?"
        done
    done
    # Cut out, the front quad is as good as absent, to camera and shadow
    # rays: the images equal those of the back quad alone. Kept, it shows.
    sed -n '/^v\|^vt\|^mtllib/p; /^usemtl back/,$p' "$tmp/cut0.obj" >"$tmp/back.obj"
    for integrator in albedo path; do
        "$render" --quiet -t 2 -r 17 17 --integrator $integrator --camera-pos 0,0,5 --look-at 0,0,0 \
            --fov 20 -o "$tmp/back-$integrator.png" "$tmp/back.obj" || fail "back: exit $?"
        "$imgdiff" --tolerance 0.01 "$tmp/back-$integrator.png" "$tmp/cut0-$integrator.png" \
            >/dev/null ||
            fail "$integrator: the cut-out quad still shows"
        "$imgdiff" --tolerance 0.01 "$tmp/back-$integrator.png" "$tmp/cut1-$integrator.png" \
            >/dev/null && fail "$integrator: the opaque quad does not show"
    done
    ;;
restrict_paths)
    # --restrict-paths: a texture outside the scene's folder (by "..", by
    # an absolute path, by a symbolic link out) is refused, named once, and
    # drawn with the fill; inside, or in a --search-path folder, it loads.
    mkdir -p "$tmp/scene/tex" "$tmp/outside" "$tmp/shared"
    "$texgen" --count 1 --size 16 "$tmp/scene/tex" >/dev/null || fail texgen
    for d in outside shared; do cp "$tmp/scene/tex/tex00.png" "$tmp/$d/$d.png"; done
    ln -s "$tmp/outside/outside.png" "$tmp/scene/tex/link.png"
    printf 'newmtl in\nKd 1 1 1\nmap_Kd tex/tex00.png\n' >"$tmp/scene/s.mtl"
    printf 'newmtl up\nKd 1 1 1\nmap_Kd ../outside/outside.png\n' >>"$tmp/scene/s.mtl"
    printf 'newmtl abs\nKd 1 1 1\nmap_Kd %s\n' "$tmp/outside/outside.png" >>"$tmp/scene/s.mtl"
    printf 'newmtl sym\nKd 1 1 1\nmap_Kd tex/link.png\n' >>"$tmp/scene/s.mtl"
    printf 'newmtl search\nKd 1 1 1\nmap_Kd ../shared/shared.png\n' >>"$tmp/scene/s.mtl"
    {
        echo "mtllib s.mtl"
        for i in 0 1 2 3 4; do
            echo "v $i 0 0"; echo "v $((i + 1)) 0 0"; echo "v $i 1 0"
        done
        echo "vt 0 0"; echo "vt 1 0"; echo "vt 0 1"
        i=1
        for m in in up abs sym search; do
            echo "usemtl $m"; echo "f $i/1 $((i + 1))/2 $((i + 2))/3"; i=$((i + 3))
        done
    } >"$tmp/scene/s.obj"
    run() {
        "$render" -t 2 -r 32 8 --integrator albedo --camera-pos 2.5,0.5,6 --look-at 2.5,0.5,0 \
            --stats-json "$tmp/r.json" -o "$tmp/r.exr" "$@" "$tmp/scene/s.obj" 2>&1 >/dev/null
    }
    err=$(run) || fail "unrestricted: exit $?"
    [ "$(json files_opened "$tmp/r.json")" = 5 ] || fail "unrestricted: not every file opened: $err"
    cp "$tmp/r.exr" "$tmp/unrestricted.exr"
    err=$(run --restrict-paths --search-path "$tmp/shared") || fail "restricted: exit $?"
    for name in outside/outside.png tex/link.png; do
        [ "$(grep -c "$name: not found, or outside the allowed folders" <<<"$err")" -ge 1 ] ||
            fail "restricted: '$name' not refused: $err"
    done
    [ "$(grep -c "outside the allowed folders" <<<"$err")" = 3 ] ||
        fail "restricted: want 3 refusals: $err"
    # Refused is drawn as missing: the image is the one where the three
    # name files that do not exist, and not the unrestricted one.
    cp "$tmp/r.exr" "$tmp/restricted.exr"
    sed 's#^map_Kd \(\.\./outside/outside\.png\|/.*\|tex/link\.png\)$#map_Kd tex/none.png#' \
        "$tmp/scene/s.mtl" >"$tmp/scene/missing.mtl"
    [ "$(grep -c 'map_Kd tex/none.png' "$tmp/scene/missing.mtl")" = 3 ] || fail "missing.mtl"
    sed 's/^mtllib s.mtl$/mtllib missing.mtl/' "$tmp/scene/s.obj" >"$tmp/scene/missing.obj"
    "$render" -t 2 -r 32 8 --integrator albedo --camera-pos 2.5,0.5,6 --look-at 2.5,0.5,0 \
        -o "$tmp/missing.exr" "$tmp/scene/missing.obj" 2>/dev/null || fail "missing: exit $?"
    "$imgdiff" --tolerance 0 "$tmp/missing.exr" "$tmp/restricted.exr" >/dev/null ||
        fail "restricted: the refused textures are not drawn as missing ones"
    ! "$imgdiff" --tolerance 0 "$tmp/unrestricted.exr" "$tmp/restricted.exr" >/dev/null ||
        fail "restricted: the image is the unrestricted one"
    # A .glb's embedded texture is the scene's own: it loads restricted,
    # opened lazily or not, as the same image read from a file.
    quad_scene "$tmp/scene/tex/tex00.png" "$tmp/scene/quad"
    quad() {
        "$render" --quiet -t 2 -r 16 16 --integrator eyelight --stats-json "$tmp/q.json" "$@" 2>&1
    }
    said=$(quad -o "$tmp/q_file.exr" "$tmp/scene/quad.gltf") || fail "quad.gltf: exit $?"
    for open in upfront lazy; do
        said=$(quad --restrict-paths --open-textures $open -o "$tmp/q.exr" "$tmp/scene/quad.glb") ||
            fail "quad.glb, $open: exit $?"
        [ -z "$said" ] && [ "$(json files_opened "$tmp/q.json")" = 1 ] ||
            fail "quad.glb, $open: the embedded texture did not load: $said"
        "$imgdiff" --tolerance 0 "$tmp/q_file.exr" "$tmp/q.exr" >/dev/null ||
            fail "quad.glb, $open: the embedded texture renders otherwise"
    done
    # What no folder holds cannot be read through /proc/self/fd: not the
    # render's own unlinked files, an embedded image's memory file or the
    # tile spill file, even one made in the scene's folder ($TMPDIR there).
    {
        echo "v 0 0 0"; echo "v 1 0 0"; echo "v 0 1 0"; echo "vt 0 0"
        for fd in $(seq 3 20); do
            printf 'newmtl fd%s\nKd 1 1 1\nmap_Kd /proc/self/fd/%s\n' $fd $fd >>"$tmp/scene/fd.mtl"
            echo "usemtl fd$fd"; echo "f 1/1 2/1 3/1"
        done
    } >"$tmp/scene/fd.obj"
    sed -i '1i mtllib fd.mtl' "$tmp/scene/fd.obj"
    fds() {
        TMPDIR=$tmp/scene "$render" -t 2 -r 8 8 --integrator albedo -o "$tmp/fd.exr" "$@" \
            "$tmp/scene/fd.obj" 2>&1 >/dev/null
    }
    said=$(fds) || fail "/proc/self/fd: exit $?"
    grep -qvE ': cannot open: |^render: wrote' <<<"$said" ||
        fail "/proc/self/fd, unrestricted: no open file of the render's was read: $said"
    said=$(fds --restrict-paths) || fail "/proc/self/fd, restricted: exit $?"
    [ "$(grep -c "^texture: /proc/self/fd/[0-9]*: not found, or outside the allowed folders$" <<<"$said")" = 18 ] ||
        fail "/proc/self/fd, restricted: not every one refused: $said"
    # Refused and missing read alike: a scene cannot probe what exists
    # outside its folder.
    sed -e 's|outside/outside.png|outside/nosuch.png|' "$tmp/scene/s.mtl" >"$tmp/scene/miss.mtl"
    sed -e 's|^mtllib s.mtl|mtllib miss.mtl|' "$tmp/scene/s.obj" >"$tmp/scene/miss.obj"
    miss=$("$render" -t 2 -r 32 8 --restrict-paths -o "$tmp/m.exr" "$tmp/scene/miss.obj" 2>&1) ||
        fail "restricted, missing: exit $?"
    a=$(grep -F "outside/outside.png:" <<<"$err" | sed 's|.*outside/outside.png||')
    b=$(grep -F "outside/nosuch.png:" <<<"$miss" | sed 's|.*outside/nosuch.png||')
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "refused '$a' and missing '$b' read differently"
    [ "$(json files_opened "$tmp/r.json")" = 2 ] || fail "restricted: in and search not both opened"
    [ "$(json file_errors "$tmp/r.json")" = 3 ] || fail "restricted: file_errors"
    # The mesh's own references: a material library outside is refused
    # (the scene renders without it).
    sed 's|^mtllib s.mtl|mtllib ../outside/s.mtl|' "$tmp/scene/s.obj" >"$tmp/scene/far.obj"
    cp "$tmp/scene/s.mtl" "$tmp/outside/s.mtl"
    err=$("$render" -t 2 -r 8 8 --restrict-paths -o "$tmp/f.exr" "$tmp/scene/far.obj" 2>&1) ||
        fail "far material library: exit $?"
    grep -q "outside/s.mtl: not found, or outside the allowed folders" <<<"$err" ||
        fail "far material library not refused: $err"
    err=$("$render" -t 2 -r 8 8 --stats-json "$tmp/f.json" -o "$tmp/f.exr" "$tmp/scene/far.obj" 2>&1) ||
        fail "unrestricted far"
    grep -q "outside the allowed folders" <<<"$err" && fail "refused without --restrict-paths: $err"
    [ "$(json files_opened "$tmp/f.json")" = 5 ] ||
        fail "unrestricted far: its library's textures not all opened: $err"
    # A glTF whose buffer lies outside cannot load without it: a clear error.
    printf '%s' '{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],
"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
"bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"uri":"../outside/b.bin","byteLength":36}]}' \
        >"$tmp/scene/b.gltf"
    head -c 36 /dev/zero >"$tmp/outside/b.bin"
    err=$("$render" -t 2 -r 8 8 --restrict-paths -o "$tmp/g.exr" "$tmp/scene/b.gltf" 2>&1) &&
        fail "a glTF with its buffer outside loaded"
    grep -q "b.bin: not found, or outside the allowed folders" <<<"$err" || fail "glTF buffer outside: $err"
    # What the command line names is the user's own: an --envmap outside
    # the scene's folder is read (the path integrator, which looks it up).
    "$texgen" --constant 2 --size 16 "$tmp/outside" >/dev/null || fail texgen
    err=$("$render" -t 2 -r 8 8 --spp 4 --integrator path --restrict-paths \
        --envmap "$tmp/outside/constant.exr" --stats-json "$tmp/env.json" -o "$tmp/env.exr" \
        "$tmp/scene/s.obj" 2>&1) || fail "--envmap outside, restricted: exit $? ($err)"
    grep -q "constant.exr" <<<"$err" && fail "--envmap outside refused: $err"
    [ "$(json file_errors "$tmp/env.json")" = 4 ] || fail "--envmap outside: file_errors: $err"
    [ "$(json files_opened "$tmp/env.json")" = 2 ] || fail "--envmap outside: not opened: $err"
    # Last, since a file system without hard links skips it alone (said,
    # not silent): a hard link inside to a file outside is refused.
    if ln "$tmp/outside/outside.png" "$tmp/scene/tex/hard.png" 2>/dev/null; then
        sed -e 's|tex/tex00.png|tex/hard.png|' "$tmp/scene/s.mtl" >"$tmp/scene/hard.mtl"
        sed -e 's|^mtllib s.mtl|mtllib hard.mtl|' "$tmp/scene/s.obj" >"$tmp/scene/hard.obj"
        hard=$("$render" -t 2 -r 32 8 --restrict-paths -o "$tmp/h.exr" "$tmp/scene/hard.obj" 2>&1) ||
            fail "restricted, hard link: exit $?"
        grep -qF "tex/hard.png: not found, or outside the allowed folders" <<<"$hard" ||
            fail "a hard link to a file outside was read: $hard"
    else
        echo "note: no hard links in $tmp: the hard link's refusal not checked"
    fi
    ;;
interrupt)
    # SIGINT mid-render: the old output stays untouched, a partial EXR is
    # written beside it (part.partial.exr), and --resume then finishes it
    # into the output, the very image of an uninterrupted run, and removes
    # the partial one. A second SIGINT stops at once, writing nothing.
    # Every signal goes once the render's --progress says a tile is done
    # (or, where no tile can finish, that the render has started), to the
    # render's own process group, as Ctrl-C at a terminal does; its tiles
    # take far longer than that wait, so none of this races the render.
    set -m # jobs in groups of their own, SIGINT not ignored (see mpi_test.sh)
    # One worker: once its first tile is done, 15 of 16 remain (seconds).
    args=(-t 1 -r 32 32 --tile 8 --spp 16384 --integrator path --quiet)
    "$render" "${args[@]}" -t 2 -o "$tmp/ref.exr" "$scene" 2>/dev/null || fail "reference: exit $?"
    printf 'old' >"$tmp/old"
    source "$(dirname "$0")/../progress_wait.sh"
    # interrupt_at REGEX SIGNALS ARGS...: render ARGS with --progress (its
    # stderr in $tmp/int.err), send each of SIGNALS once a line matches
    # REGEX; the render's exit status.
    interrupt_at() {
        local regex=$1 signals=$2 sig
        shift 2
        rm -f "$tmp/int.err" # the lines waited for are this render's, not the last one's
        "$render" --progress "$@" 2>"$tmp/int.err" &
        local pid=$!
        wait_for_line "$tmp/int.err" "$regex" 60 || { kill -KILL $pid; fail "no '$regex' line"; }
        for sig in $signals; do
            kill -"$sig" -- -$pid
        done
        wait $pid
    }
    first_tile='^render: [1-9][0-9]* of 16 tiles'
    printf 'old' >"$tmp/part.exr"
    interrupt_at "$first_tile" INT "${args[@]}" --stats-json "$tmp/part.json" -o "$tmp/part.exr" "$scene"
    rc=$?
    [ $rc = 130 ] || fail "interrupted: exit $rc, want 130 ($(cat "$tmp/int.err"))"
    cmp -s "$tmp/old" "$tmp/part.exr" || fail "a partial image replaced the output"
    [ -s "$tmp/part.partial.exr" ] || fail "no partial image beside the output"
    grep -q "interrupted (SIGINT) .*: wrote the partial image $tmp/part.partial.exr" \
        "$tmp/int.err" || fail "no warning: $(cat "$tmp/int.err")"
    [ "$(jq -c '[.partial, .resumed]' "$tmp/part.json")" = '[true,false]' ] || fail "stats: $(cat "$tmp/part.json")"
    done_tiles=$(json tiles_rendered "$tmp/part.json")
    [ "$done_tiles" -ge 1 ] && [ "$done_tiles" -lt 16 ] || fail "interrupted with $done_tiles of 16 tiles"
    # A resumed render says so, and how many tiles it rendered itself.
    "$render" "${args[@]}" -t 2 --resume --stats-json "$tmp/res.json" -o "$tmp/part.exr" "$scene" \
        2>/dev/null || fail "--resume: exit $?"
    [ ! -e "$tmp/part.partial.exr" ] || fail "the partial image outlived --resume"
    "$imgdiff" --tolerance 0 "$tmp/ref.exr" "$tmp/part.exr" >/dev/null ||
        fail "the resumed image differs from an uninterrupted one"
    [ "$(jq -c '[.partial, .resumed]' "$tmp/res.json")" = '[false,true]' ] || fail "resumed: stats: $(cat "$tmp/res.json")"
    [ "$(json tiles_rendered "$tmp/res.json")" = $((16 - done_tiles)) ] ||
        fail "resumed: $(json tiles_rendered "$tmp/res.json") tiles rendered, want $((16 - done_tiles))"
    # A PNG cannot be resumed, and is not replaced by a partial one either;
    # the statistics say what happened: partial, and the tiles rendered.
    printf 'old' >"$tmp/pic.png"
    interrupt_at "$first_tile" INT "${args[@]}" --stats-json "$tmp/pic.json" -o "$tmp/pic.png" "$scene"
    rc=$?
    [ $rc = 130 ] || fail "PNG: exit $rc, want 130"
    cmp -s "$tmp/old" "$tmp/pic.png" || fail "PNG: a partial image replaced the output"
    [ -s "$tmp/pic.partial.png" ] || fail "PNG: no partial image beside the output"
    [ "$(jq -c '[.partial, .resumed]' "$tmp/pic.json")" = '[true,false]' ] || fail "PNG: stats: $(cat "$tmp/pic.json")"
    n=$(json tiles_rendered "$tmp/pic.json")
    [ "$n" -ge 1 ] && [ "$n" -lt 16 ] || fail "PNG: $n tiles rendered of 16"
    # A stop not honoured: one tile of the whole image at a huge sample
    # count cannot reach a tile boundary soon, so 5 s after the signal the
    # process ends by itself, writing nothing. (timeout: without the limit
    # it would run for hours; --foreground: it passes TERM on to render
    # alone, once.)
    printf 'old' >"$tmp/slow.exr"
    timeout --foreground -s KILL 30 "$render" --progress -t 1 -r 256 256 --tile 256 --spp 65536 \
        --integrator path --quiet -o "$tmp/slow.exr" "$scene" 2>"$tmp/slow.err" &
    pid=$!
    wait_for_line "$tmp/slow.err" '^render: 0 of 1 tiles' 60 || { kill -KILL -- -$pid; fail "slow: never started"; }
    start=$EPOCHREALTIME
    kill -TERM $pid
    wait $pid
    rc=$?
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    [ $rc = 143 ] || fail "a stop not honoured: exit $rc, expected 143 ($(cat "$tmp/slow.err"))"
    grep -q "did not stop within 5 s" "$tmp/slow.err" || fail "a stop not honoured: $(cat "$tmp/slow.err")"
    awk -v s="$secs" 'BEGIN { exit !(s >= 4.5 && s < 30) }' || fail "a stop not honoured: ended after $secs s"
    cmp -s "$tmp/old" "$tmp/slow.exr" || fail "a stop not honoured: the old output changed"
    [ -z "$(ls "$tmp" | grep -v -e '^slow' -e '^old$' -e '^part' -e '^ref' -e '^tex$' -e '^scene' -e '^e$' -e '^pic' -e '^res' -e '^int')" ] ||
        fail "a stop not honoured: left files behind: $(ls "$tmp")"
    # Twice, back to back: the second ends the process at once (exit 130),
    # the output untouched, and no partial image, or only a valid one (if
    # the first had written it before the second came).
    printf 'old' >"$tmp/two.exr"
    interrupt_at "$first_tile" "INT INT" "${args[@]}" -o "$tmp/two.exr" "$scene"
    rc=$?
    [ $rc = 130 ] || fail "two signals: exit $rc"
    cmp -s "$tmp/old" "$tmp/two.exr" || fail "two signals: the output changed"
    if [ -e "$tmp/two.partial.exr" ]; then
        "$render" "${args[@]}" -t 2 --resume -o "$tmp/two.exr" "$scene" 2>/dev/null ||
            fail "two signals: a partial image that does not resume"
        "$imgdiff" --tolerance 0 "$tmp/ref.exr" "$tmp/two.exr" >/dev/null ||
            fail "two signals: the resumed image is not the whole render"
    fi
    # --resume of a complete image, or of another render's, is refused, in
    # one line naming the file it read and what is wrong with it
    # (resume_refused PARTIAL WHY ARGS...: --resume ARGS, the output beside
    # PARTIAL, says "PARTIAL: WHY", before the scene is loaded).
    resume_refused() {
        local partial=$1 why=$2
        shift 2
        "$render" "${args[@]}" --resume -o "${partial/.partial/}" "$@" 2>"$tmp/e" &&
            fail "--resume $*: resumed $partial"
        [ "$(cat "$tmp/e")" = "render: --resume: $partial: $why" ] ||
            fail "--resume $*: '$(cat "$tmp/e")', want '$partial: $why'"
    }
    resume_refused "$tmp/ref.exr" "not a partial render" "$scene"
    resume_refused "$tmp/ref.exr" "not a partial render" "$tmp/nosuch.gltf"
    resume_refused "$tmp/none.partial.exr" "cannot open: No such file or directory" "$scene"
    interrupt_at "$first_tile" INT "${args[@]}" -o "$tmp/other.exr" "$scene"
    rc=$?
    [ $rc = 130 ] || fail "other: exit $rc"
    [ ! -e "$tmp/other.exr" ] || fail "an interrupted render wrote its output"
    # Another render's: exactly the values that differ, its and this one's.
    other=$tmp/other.partial.exr
    resume_refused "$other" "rendered with other options: seed 0 (this render: 7)" --seed 7 "$scene"
    resume_refused "$other" "rendered with other options: size 32x32 (this render: 16x16)" \
        -r 16 16 "$scene"
    resume_refused "$other" \
        "rendered with other options: size 32x32 (this render: 32x16), spp 16384 (this render: 8)" \
        -r 32 16 --spp 8 "$scene"
    resume_refused "$other" "rendered with other options: integrator path (this render: ao)" \
        --integrator ao "$scene"
    resume_refused "$other" "rendered with other options: fov unset (this render: 30)" --fov 30 "$scene"
    cp "$scene" "$tmp/twin.obj"
    resume_refused "$other" "rendered with other options: scene scene.obj (this render: twin.obj)" \
        "$tmp/twin.obj"
    # A partial image tampered with (its attributes renamed or changed, the
    # file cut short) is named, and so is what is wrong with it.
    tamper() { # SED-EXPRESSION: other.partial.exr edited into t.partial.exr
        LC_ALL=C sed "$1" "$other" >"$tmp/t.partial.exr"
    }
    tamper 's/rt:partial/rt:partiaZ/'
    resume_refused "$tmp/t.partial.exr" "not a partial render" "$scene"
    tamper 's/rt:missing_tiles/rt:missing_tileZ/'
    resume_refused "$tmp/t.partial.exr" "its list of missing tiles is damaged" "$scene"
    tamper 's/rt:image_options/rt:image_optionZ/'
    resume_refused "$tmp/t.partial.exr" "records no image options" "$scene"
    tamper 's/spp 16384/spp 16385/'
    resume_refused "$tmp/t.partial.exr" "rendered with other options: spp 16385 (this render: 16384)" "$scene"
    tamper 's/spp 16384; seed 0/seed 0; spp 16384/'
    line="scene scene.obj; path; texture full; seed 0; spp 16384; tile 8; depth 8; lights mis; envmap none"
    resume_refused "$tmp/t.partial.exr" "rendered with options recorded otherwise: $line" "$scene"
    printf 'garbage' >"$tmp/t.partial.exr"
    resume_refused "$tmp/t.partial.exr" "not an OpenEXR file" "$scene"
    # SIGKILL leaves nothing behind: a .glb's embedded texture is read from
    # the scene's own bytes, never written to a file of its own in $TMPDIR
    # (which a killed render could not remove).
    mkdir "$tmp/tmpdir"
    quad_scene "$tmp/tex/tex00.png" "$tmp/quad"
    TMPDIR=$tmp/tmpdir interrupt_at "$first_tile" KILL "${args[@]}" -o "$tmp/quad.exr" "$tmp/quad.glb"
    rc=$?
    [ $rc = 137 ] || fail "SIGKILL: exit $rc ($(cat "$tmp/int.err"))"
    [ -z "$(ls -A "$tmp/tmpdir")" ] || fail "SIGKILL left files in \$TMPDIR: $(ls -A "$tmp/tmpdir")"
    # ... and the embedded texture renders as the same image read from a file.
    for s in glb gltf; do
        TMPDIR=$tmp/tmpdir "$render" --quiet -t 2 -r 32 32 --integrator eyelight \
            --stats-json "$tmp/$s.json" -o "$tmp/quad_$s.exr" "$tmp/quad.$s" || fail "quad.$s: exit $?"
        [ "$(json files_opened "$tmp/$s.json")/$(json file_errors "$tmp/$s.json")" = 1/0 ] ||
            fail "quad.$s: its texture did not load: $(cat "$tmp/$s.json")"
    done
    "$imgdiff" --tolerance 0 "$tmp/quad_gltf.exr" "$tmp/quad_glb.exr" >/dev/null ||
        fail "the embedded texture renders otherwise than the same file's"
    [ -z "$(ls -A "$tmp/tmpdir")" ] || fail "a render left files in \$TMPDIR: $(ls -A "$tmp/tmpdir")"
    ;;
tx_texture)
    # OpenImageIO's texture format: a .tx made by our maketx from the PNG
    # holds the very pyramid the PNG's spill would (same filter, 64x64
    # tiles), so the render is the same to the bit, read tile by tile; at
    # -t 1 and -t 2 alike. A .tx made by OpenImageIO's maketx (where it is
    # installed) renders with no texture error, within 0.03 of the PNG: its
    # levels are averaged in sRGB, ours in linear light.
    maketx=$testdata
    "$texgen" --count 1 --size 512 --seed 3 "$tmp/big" >/dev/null || fail texgen
    "$maketx" "$tmp/big/tex00.png" 2>"$tmp/said" || fail "maketx: exit $?"
    grep -q "tex00.tx: tiled MIP-mapped TIFF, 512x512 RGB 8-bit sRGB, 10 levels" "$tmp/said" ||
        fail "maketx did not say what it wrote: $(cat "$tmp/said")"
    for t in png tx; do
        sed "s|tex/tex00.png|big/tex00.$t|" "$tmp/scene.mtl" >"$tmp/scene_$t.mtl"
        sed "s|mtllib scene.mtl|mtllib scene_$t.mtl|" "$scene" >"$tmp/scene_$t.obj"
    done
    "$render" --quiet -t 2 -r 96 72 --spp 4 -o "$tmp/png.exr" "$tmp/scene_png.obj" 2>/dev/null ||
        fail "png render: exit $?"
    for threads in 1 2; do
        "$render" --quiet -t $threads -r 96 72 --spp 4 --stats-json "$tmp/tx.json" \
            -o "$tmp/tx.exr" "$tmp/scene_tx.obj" 2>/dev/null || fail "tx render: exit $?"
        "$imgdiff" --quiet "$tmp/png.exr" "$tmp/tx.exr" || fail "-t $threads: the .tx renders otherwise"
        [ "$(json files_opened "$tmp/tx.json")" -ge 1 ] || fail "the .tx was not opened"
    done
    if [ -x /usr/bin/maketx ]; then
        /usr/bin/maketx "$tmp/big/tex00.png" -o "$tmp/big/tex00.tx" >/dev/null || fail "OIIO maketx"
        err=$("$render" --quiet -t 2 -r 96 72 --spp 4 --stats-json "$tmp/oiio.json" -o "$tmp/oiio.exr" \
            "$tmp/scene_tx.obj" 2>&1) || fail "OpenImageIO's .tx: exit $?"
        grep -q tex00 <<<"$err" && fail "OpenImageIO's .tx: $err"
        [ "$(json file_errors "$tmp/oiio.json")" = 1 ] || fail "file errors other than nosuch.png"
        "$imgdiff" --quiet --tolerance 0.03 "$tmp/png.exr" "$tmp/oiio.exr" ||
            fail "OpenImageIO's .tx renders far from the PNG"
    else
        echo "note: no /usr/bin/maketx (openimageio-tools): OpenImageIO's own .tx not checked"
    fi
    ;;
missing_texture)
    for open in upfront lazy; do
        err=$("$render" -t 2 -r 32 32 --open-textures $open -o "$tmp/m.png" "$scene" 2>&1 >/dev/null) ||
            fail "$open: exit $?"
        [ "$(grep -c 'nosuch.png' <<<"$err")" = 1 ] ||
            fail "$open: missing texture reported $(grep -c nosuch <<<"$err") times: $err"
        [ -s "$tmp/m.png" ] || fail "$open: no image written"
        rm -f "$tmp/m.png"
    done
    # What the scene names and cannot be had is said once, and the render
    # goes on: a missing material library, an image of uri "".
    sed -e 's|mtllib scene.mtl|mtllib nosuch.mtl|' "$scene" >"$tmp/nomtl.obj"
    err=$("$render" -r 8 8 -o "$tmp/m.png" "$tmp/nomtl.obj" 2>&1 >/dev/null) || fail "no mtl: exit $?"
    [ "$(grep -c 'nosuch.mtl: cannot open: No such file or directory' <<<"$err")" = 1 ] ||
        fail "a missing material library not said once: $err"
    tri_gltf '[0]' '[{"mesh": 0}]' '' '"materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
 "textures": [{"source": 0}], "images": [{"uri": ""}]' |
        sed 's|"attributes": {"POSITION": 0}}|"attributes": {"POSITION": 0}, "material": 0}|' >"$tmp/empty-uri.gltf"
    err=$("$render" -r 8 8 -o "$tmp/m.png" "$tmp/empty-uri.gltf" 2>&1 >/dev/null) ||
        fail "empty uri: exit $?"
    [ "$(grep -c 'a texture with an empty file name: ignored' <<<"$err")" = 1 ] ||
        fail "an empty image uri not said once: $err"
    ;;
bad_input)
    check() { # expected-status expected-message-part args...
        local want=$1 msg=$2
        shift 2
        out=$("$render" "$@" 2>&1 >/dev/null); rc=$?
        [ "$rc" = "$want" ] || fail "render $*: exit $rc, expected $want ($out)"
        # One line; a usage error (exit 2) adds "Try 'render --help'."
        [ "$(wc -l <<<"$out")" -le $((want == 2 ? 2 : 1)) ] || fail "render $*: more than one error line: $out"
        [[ $out == *"$msg"* ]] || fail "render $*: '$out' lacks '$msg'"
    }
    check 1 "cannot open" -o "$tmp/x.exr" "$tmp/nosuch.gltf"
    printf 'hello\n' >"$tmp/text.gltf"
    check 1 "not a scene file" -o "$tmp/x.exr" "$tmp/text.gltf"
    printf '{"asset": {"version": "2.0"}, "scenes": [{"nodes": [0' >"$tmp/broken.gltf"
    check 1 "broken.gltf" -o "$tmp/x.exr" "$tmp/broken.gltf"
    check 2 "" -t 0 "$scene"
    check 2 "" -t -3 "$scene"
    check 2 "" -r 0 0 "$scene"
    check 2 "" --no-such-option "$scene"
    check 1 "--envmap" --integrator path --envmap "$tmp/nosuch.exr" -o "$tmp/x.exr" "$scene"
    # A map the user named that cannot be used is an error, as a missing
    # one is (not a white sky): a folder, an empty file, a damaged one.
    mkdir "$tmp/env-dir.exr"
    : >"$tmp/env-empty.exr"
    printf 'v/1\001 not really' >"$tmp/env-damaged.exr"
    check 1 "--envmap $tmp/env-dir.exr: cannot open: Is a directory" --integrator path \
        --envmap "$tmp/env-dir.exr" -o "$tmp/x.exr" "$scene"
    check 1 "--envmap $tmp/env-empty.exr: empty file" --integrator path \
        --envmap "$tmp/env-empty.exr" -o "$tmp/x.exr" "$scene"
    check 1 "--envmap $tmp/env-damaged.exr: " --integrator path \
        --envmap "$tmp/env-damaged.exr" -o "$tmp/x.exr" "$scene"
    [ ! -e "$tmp/x.exr" ] || fail "a bad --envmap wrote an image"
    # A file an import would read that is larger than --max-scene-mb (default
    # 16 GiB) is not read: a 1 TB sparse OBJ was once scanned for 85 minutes.
    # The override first: a 2 MiB OBJ under --max-scene-mb 1 (quick to read
    # if the check were gone, so a regression fails here, not by timing out).
    { printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n'; head -c 2200000 /dev/zero | tr '\0' '#'; echo; } \
        >"$tmp/two.obj"
    check 1 "two.obj: 2.1 MiB, over the 1.0 MiB a scene's file may be (--max-scene-mb)" \
        --max-scene-mb 1 -o "$tmp/x.exr" "$tmp/two.obj"
    check 2 "--max-scene-mb: '0' is not a size" --max-scene-mb 0 "$scene"
    if truncate -s 1T "$tmp/huge.obj" 2>/dev/null; then
        check 1 "huge.obj: 1.0 TiB, over the 16.0 GiB a scene's file may be (--max-scene-mb)" \
            -o "$tmp/x.exr" "$tmp/huge.obj"
        printf 'mtllib huge.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' >"$tmp/m.obj"
        truncate -s 20G "$tmp/huge.mtl" || fail truncate
        out=$("$render" -r 8 8 -o "$tmp/m.exr" "$tmp/m.obj" 2>&1) || fail "a huge .mtl: exit $? ($out)"
        [[ $out == *"huge.mtl: 20.0 GiB, over the 16.0 GiB a scene's file may be"* ]] ||
            fail "a huge .mtl: '$out'"
        rm -f "$tmp/huge.obj" "$tmp/huge.mtl" "$tmp/m.exr"
    fi
    [ ! -e "$tmp/x.exr" ] || fail "a file too large wrote an image"
    # A --search-path that is not a folder is an error, not dropped in silence.
    check 1 "render: --search-path $tmp/nowhere: No such file or directory" --restrict-paths \
        --search-path "$tmp/nowhere" -o "$tmp/x.exr" "$scene"
    check 1 "render: --search-path $tmp/text.gltf: not a folder" --search-path "$tmp/text.gltf" \
        -o "$tmp/x.exr" "$scene"
    [ ! -e "$tmp/x.exr" ] || fail "a bad --search-path wrote an image"
    # Coordinates Embree cannot take (it asserts, aborting the process, on a
    # ray from beyond 1.8e18): a vertex, the file's camera, --camera-pos.
    printf 'v 0 0 0\nv 1 0 0\nv 0 1 1e19\nf 1 2 3\n' >"$tmp/far.obj"
    check 1 "a vertex at (0, 1, 1e+19): coordinates must be finite and within" -o "$tmp/x.exr" \
        "$tmp/far.obj"
    tri_gltf '[0, 1]' '[{"mesh": 0}, {"camera": 0, "translation": [0, 0, 1e19]}]' '' \
        '"cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.01}}]' \
        >"$tmp/far-camera.gltf"
    check 1 "the camera at (0, 0, 1e+19): coordinates must be finite" -o "$tmp/x.exr" \
        "$tmp/far-camera.gltf"
    sed 's/1e19/3/' "$tmp/far-camera.gltf" >"$tmp/near-camera.gltf"
    "$render" --quiet -r 8 8 -o "$tmp/near.exr" "$tmp/near-camera.gltf" ||
        fail "the same scene with its camera at z = 3: exit $?"
    out=$(TMPDIR=$tmp/nosuch "$render" -o "$tmp/x.exr" "$scene" 2>&1)
    [ $? = 1 ] && [[ $out == *"cannot start the texture system: cannot make the tile spill file in $tmp/nosuch: No such file or directory"* ]] ||
        fail "an unusable TMPDIR: $out"
    # A glTF that needs an extension assimp cannot read fails naming it.
    tri_gltf '[0]' '[{"mesh": 0}]' '{"byteLength": 36, "extensions": {"EXT_meshopt_compression": {"fallback": true}}}' \
        '"extensionsUsed": ["EXT_meshopt_compression"], "extensionsRequired": ["EXT_meshopt_compression"]' \
        >"$tmp/meshopt.gltf"
    check 1 "meshopt.gltf: needs the glTF extensions EXT_meshopt_compression, which render cannot read (not a scene file: " \
        -o "$tmp/x.exr" "$tmp/meshopt.gltf"
    check 2 "is not a point X,Y,Z" --camera-pos 1e19,1e19,1e19 "$scene"
    check 2 "is not a point X,Y,Z" --look-at 0,nan,0 "$scene"
    check 2 "the point of --camera-pos itself" --camera-pos 1,2,3 --look-at 1,2,3 "$scene"
    check 1 "cannot write into" -o "$tmp/no/such/dir/x.exr" "$scene"
    # Where no file can be made though access() says yes (as root): found
    # before the render, for the image and for --stats-json alike.
    check 1 "/proc/x.exr: cannot write into /proc" -o /proc/x.exr "$scene"
    check 1 "/sys/x.png: cannot write into /sys" -o /sys/x.png "$scene"
    check 1 "--stats-json /proc/s.json: cannot write into /proc" --stats-json /proc/s.json \
        -o "$tmp/x.exr" "$scene"
    [ ! -e "$tmp/x.exr" ] || fail "an output was written though --stats-json could not be"
    : >"$tmp/plain"
    check 1 "Not a directory" -o "$tmp/plain/x.exr" "$scene"
    mkdir "$tmp/folder.exr"
    check 1 "Is a directory" -o "$tmp/folder.exr" "$scene"
    printf 'keep' >"$tmp/keep.exr"
    check 1 "" -o "$tmp/keep.exr" "$tmp/nosuch.gltf"
    [ "$(cat "$tmp/keep.exr")" = keep ] || fail "a failed run clobbered the output"
    # Started as one of several ranks by a launcher (its variable faked), a
    # copy of render with no render-mpi beside it refuses in one line
    # rather than render the whole image once per rank.
    mkdir "$tmp/alone" && cp "$render" "$tmp/alone/render"
    out=$(OMPI_COMM_WORLD_SIZE=2 "$tmp/alone/render" -o "$tmp/r.exr" "$scene" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 1 ] || fail "under a launcher without render-mpi: exit $rc, expected 1 ($out)"
    [[ $out == *"one of 2 ranks"* ]] || fail "under a launcher without render-mpi: '$out'"
    [ ! -e "$tmp/r.exr" ] || fail "under a launcher without render-mpi: wrote an image"
    ;;
special_files)
    # Names that are not regular files: a FIFO would block a reader until a
    # writer came (for ever), /dev/stdin streams. Each is refused with one
    # line and the render goes on; timeout turns a hang back into a failure.
    mkfifo "$tmp/tex/pipe.png" "$tmp/pipe.mtl" "$tmp/pipe.obj" || fail mkfifo
    sed -e 's|tex/nosuch.png|tex/pipe.png|' "$tmp/scene.mtl" >"$tmp/fifo.mtl"
    printf 'newmtl stdin\nmap_Kd /dev/stdin\n' >>"$tmp/fifo.mtl"
    sed -e 's|mtllib scene.mtl|mtllib fifo.mtl|' -e 's|usemtl missing|usemtl stdin|' \
        "$scene" >"$tmp/fifo.obj"
    sed -e 's|mtllib scene.mtl|mtllib pipe.mtl|' "$scene" >"$tmp/mtl.obj"
    run() { # expected-status args...: stdin is a pipe
        local want=$1
        shift
        out=$(printf 'x' | timeout --foreground 60 "$render" -r 32 24 "$@" 2>&1 >/dev/null)
        rc=$?
        [ "$rc" = "$want" ] || fail "render $*: exit $rc, expected $want ($out)"
    }
    once() { # message: it appears on exactly one line of $out
        [ "$(grep -c -F -- "$1" <<<"$out")" = 1 ] || fail "'$1' not once in: $out"
    }
    for restrict in "" --restrict-paths; do
        run 0 $restrict -o "$tmp/f.png" "$tmp/fifo.obj"
        # (Under --restrict-paths, a file that is not one to read says
        # what a refused or missing one says.)
        why="cannot open: a FIFO, not a regular file"
        [ -z "$restrict" ] || why="not found, or outside the allowed folders"
        once "tex/pipe.png: $why"
        once "/dev/stdin: $why"
        [ -s "$tmp/f.png" ] || fail "$restrict: no image"
        rm -f "$tmp/f.png"
    done
    run 0 -o "$tmp/f.png" "$tmp/mtl.obj"
    once "pipe.mtl: cannot open: a FIFO, not a regular file"
    run 1 -o "$tmp/f.png" "$tmp/pipe.obj"
    once "pipe.obj: cannot open: a FIFO, not a regular file"
    run 1 -o "$tmp/f.png" /dev/stdin
    once "/dev/stdin: cannot open: a FIFO, not a regular file"
    # A name with terminal escapes in it is printed escaped.
    sed -e 's|tex/nosuch.png|tex/\x1b[31mred.png|' "$tmp/scene.mtl" >"$tmp/esc.mtl"
    sed -e 's|mtllib scene.mtl|mtllib esc.mtl|' "$scene" >"$tmp/esc.obj"
    run 0 -o "$tmp/f.png" "$tmp/esc.obj"
    once 'tex/\x1b[31mred.png: cannot open: No such file or directory'
    [[ $out != *$'\x1b'* ]] || fail "an escape character was printed raw: $out"
    ;;
deep_nesting)
    # Nesting that overflowed the main thread's stack (renderer/import_stack.h):
    # deep JSON is refused before the import, deep glTF nodes load on the
    # import's own large stack, and an overflow of that stack is one line.
    sanitizer=$testdata # this case's fifth argument: RT_SANITIZE
    nodes=$(awk 'BEGIN { n = 14000; printf "["; for (i = 0; i < n - 1; i++) printf "{\"children\": [%d]}, ", i + 1; printf "{\"mesh\": 0}]" }')
    arrays=$(awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "["; for (i = 0; i < 1000000; i++) printf "]" }')
    tri_gltf '[0]' "$nodes" >"$tmp/nodes.gltf"
    tri_gltf '[0]' '[{"mesh": 0}]' '' "\"extras\": $arrays" >"$tmp/arrays.gltf"
    "$render" --quiet -r 8 8 --stats-json "$tmp/n.json" -o "$tmp/n.exr" "$tmp/nodes.gltf" ||
        fail "14,000 nested nodes: exit $?"
    [ "$(json triangles "$tmp/n.json")" = 1 ] && [ "$(json instances "$tmp/n.json")" = 1 ] ||
        fail "14,000 nested nodes: the mesh at the bottom was not reached"
    check() { # file expected-message [env]
        out=$(env ${3:-} "$render" --quiet -r 8 8 -o "$tmp/x.exr" "$1" 2>&1)
        rc=$?
        [ "$rc" = 1 ] || fail "$1: exit $rc, expected 1 ($out)"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "$1: not one line: $out"
        [[ $out == *"$2"* ]] || fail "$1: '$out' lacks '$2'"
    }
    check "$tmp/arrays.gltf" "arrays.gltf: too deeply nested: JSON deeper than 1000 levels"
    # The same JSON as a .glb's chunk: "glTF", version 2, length; the chunk.
    json=$(<"$tmp/arrays.gltf")
    n=$(printf '%s' "$json" | wc -c)
    le32() { printf "\\x%02x\\x%02x\\x%02x\\x%02x" $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
    {
        printf 'glTF'; printf "$(le32 2)$(le32 $((n + 20)))$(le32 "$n")"; printf 'JSON'
        printf '%s' "$json"
    } >"$tmp/arrays.glb"
    check "$tmp/arrays.glb" "arrays.glb: too deeply nested: JSON deeper than 1000 levels"
    # Under the sanitizers the overflow is theirs to report.
    if [ -z "$sanitizer" ]; then
        check "$tmp/nodes.gltf" "nodes.gltf: too deeply nested: the import overflowed its 1 MiB stack" \
            RT_IMPORT_STACK_MB=1
    fi
    ;;
import_budget)
    # Headers that declare billions of elements, a glTF buffer over a 10 GB
    # sparse file: the import's allocations stop at its budget
    # (renderer/import_budget.h), and the message says so.
    sanitizer=$testdata # this case's fifth argument: RT_SANITIZE
    if [ -n "$sanitizer" ]; then
        # The sanitizers bring their own malloc, so there is no budget, and
        # their operator new aborts on a request it cannot meet.
        echo "skipped: no import budget under the sanitizers"
        exit 77
    fi
    # A binary PLY whose 800 million vertices fit its size (a 10 GB sparse
    # file, which holds no blocks on disk): render's own check passes it,
    # and assimp's reservation meets the budget.
    printf 'ply\nformat binary_little_endian 1.0\nelement vertex 800000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n' >"$tmp/huge.ply"
    truncate -s 10G "$tmp/huge.ply" || fail "truncate"
    truncate -s 10G "$tmp/sparse.bin" || fail "truncate"
    tri_gltf '[0]' '[{"mesh": 0}]' '{"byteLength": 10737418240, "uri": "sparse.bin"}' \
        >"$tmp/sparse.gltf"
    check() { # file expected-message
        out=$("$render" --quiet -r 8 8 -o "$tmp/x.exr" "$1" 2>&1)
        rc=$?
        [ "$rc" = 1 ] || fail "$1: exit $rc, expected 1 ($out)"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "$1: not one line: $out"
        [[ $out == *"$2"* ]] || fail "$1: '$out' lacks '$2'"
    }
    budget="too large for its size: the import ran out of its memory budget of 256."
    check "$tmp/huge.ply" "huge.ply: $budget"
    check "$tmp/sparse.gltf" "sparse.gltf: $budget"
    ;;
framing)
    # The automatic camera (no camera in the file) shows the scene: from
    # outside the geometry that matters, three-quarter from above, up as
    # --up says; --view picks another; a file's camera wins unless a view is
    # asked for. Each scene here came out useless before: the level seen
    # edge-on from below its floor (7% of the pixels hit), the object inside
    # a skybox with a far outlier not at all (the camera a million units
    # out, black).
    imgstat=$testdata # this case's fifth argument
    printf 'newmtl white\nKd 1 1 1\nnewmtl black\nKd 0 0 0\n' >"$tmp/w.mtl"
        # A level with a pit: floor 20x20 at y=0 (a grid, 400 quads), walls 3 high, a 4x4 pit 15 deep with stairs
    pit() {
        awk 'BEGIN {
            print "mtllib w.mtl"; print "usemtl white"; n = 0
            for (i = 0; i < 20; i++) for (j = 0; j < 20; j++) {
                x = i - 10; z = j - 10
                if (x >= -2 && x < 2 && z >= -2 && z < 2) continue   # the pit
                printf "v %d 0 %d\nv %d 0 %d\nv %d 0 %d\nv %d 0 %d\n", x, z, x + 1, z, x + 1, z + 1, x, z + 1
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 4, n + 3, n + 1, n + 3, n + 2; n += 4
            }
            # walls at x = +-10, z = +-10, 3 high, 20 segments each
            for (k = 0; k < 20; k++) {
                a = k - 10
                printf "v %d 0 -10\nv %d 0 -10\nv %d 3 -10\nv %d 3 -10\n", a, a + 1, a + 1, a
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4
                printf "v -10 0 %d\nv -10 0 %d\nv -10 3 %d\nv -10 3 %d\n", a + 1, a, a, a + 1
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4
            }
            # the pit: 4 walls down to -15, stairs: 60 steps spiralling down
            for (s = 0; s < 60; s++) {
                y = -s * 0.25; x0 = -2 + (s % 4); z0 = -2 + int(s / 4) % 4
                printf "v %g %g %g\nv %g %g %g\nv %g %g %g\nv %g %g %g\n", x0, y, z0, x0 + 1, y, z0, x0 + 1, y, z0 + 1, x0, y, z0 + 1
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 4, n + 3, n + 1, n + 3, n + 2; n += 4
            }
            printf "v -2 -15 -2\nv 2 -15 -2\nv 2 0 -2\nv -2 0 -2\n"
            printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4
        }' > "$tmp/pit.obj"
    }
        # A Z-up terrain: a 30x30 grid in x, y with hills in z, and 9 posts 4 high along +z
    zup() {
        awk 'BEGIN {
            print "mtllib w.mtl"; print "usemtl white"; n = 0; N = 30
            for (j = 0; j <= N; j++) for (i = 0; i <= N; i++) {
                x = i - N / 2; y = j - N / 2; printf "v %g %g %g\n", x, y, 1.5 * sin(x / 4) * cos(y / 5)
            }
            for (j = 0; j < N; j++) for (i = 0; i < N; i++) {
                a = j * (N + 1) + i + 1; b = a + 1; c = a + N + 2; d = a + N + 1
                printf "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d
            }
            n = (N + 1) * (N + 1)
            for (p = 0; p < 9; p++) {
                x = -10 + 10 * (p % 3); y = -10 + 10 * int(p / 3)
                printf "v %g %g 0\nv %g %g 0\nv %g %g 5\nv %g %g 5\n", x - 0.3, y, x + 0.3, y, x + 0.3, y, x - 0.3, y
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4
            }
        }' > "$tmp/zup.obj"
    }
        # An object (a 40x40 grid bent into a bump) inside a skybox of 12 triangles at +-1000,
        # and one far outlier triangle at x = 1e6
    skybox() {
        awk 'BEGIN {
            print "mtllib w.mtl"; print "usemtl white"; N = 40
            for (j = 0; j <= N; j++) for (i = 0; i <= N; i++) {
                x = (i - N / 2) / 10; z = (j - N / 2) / 10; printf "v %g %g %g\n", x, exp(-(x * x + z * z)), z
            }
            for (j = 0; j < N; j++) for (i = 0; i < N; i++) {
                a = j * (N + 1) + i + 1; b = a + 1; c = a + N + 2; d = a + N + 1
                printf "f %d %d %d\nf %d %d %d\n", a, d, c, a, c, b
            }
            n = (N + 1) * (N + 1); print "usemtl black"
            for (k = 0; k < 8; k++) printf "v %d %d %d\n", (k % 2 ? 1000 : -1000), (int(k / 2) % 2 ? 1000 : -1000), (k >= 4 ? 1000 : -1000)
            split("1 2 4 1 4 3 5 7 8 5 8 6 1 5 6 1 6 2 3 4 8 3 8 7 1 3 7 1 7 5 2 6 8 2 8 4", f, " ")
            for (t = 0; t < 12; t++) printf "f %d %d %d\n", n + f[3 * t + 1], n + f[3 * t + 2], n + f[3 * t + 3]
            n += 8
            printf "v 1000000 0 0\nv 1000001 0 0\nv 1000000 1 0\nf %d %d %d\n", n + 1, n + 2, n + 3
        }' > "$tmp/sky.obj"
    }
    pit; zup; skybox
    # cam FIELD K: component K (0-2) of the camera's FIELD in $tmp/f.json.
    cam() { jq -r --arg f "$1" --argjson k "$2" '.camera[$f][$k]' "$tmp/f.json"; }
    from() { jq -r '.camera.from' "$tmp/f.json"; }
    # covered SCENE ARGS...: the share of pixels on white geometry (albedo 1).
    covered() {
        local scene=$1
        shift
        "$render" --quiet -t 2 -r 64 48 --integrator albedo --stats-json "$tmp/f.json" \
            -o "$tmp/f.png" "$@" "$tmp/$scene" || fail "$scene $*: exit $?"
        "$imgstat" "$tmp/f.png" | sed 's/.* mean=\([^,]*\),.*/\1/'
    }
    at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }' || fail "$3: $1 < $2"; }
    c=$(covered pit.obj)
    at_least "$c" 0.15 "pit level: share of pixels on geometry"
    at_least "$(cam position 1)" 3 "pit level: camera height (above the walls)"
    at_least "$(cam forward 1)" -0.9 "pit level: looking down, not straight down"
    at_least -0.1 "$(cam forward 1)" "pit level: looking down"
    c=$(covered zup.obj --up z)
    at_least "$c" 0.2 "Z-up terrain: share of pixels on geometry"
    at_least "$(cam position 2)" 2 "Z-up terrain: camera height along z"
    at_least "$(cam up 2)" 0.25 "Z-up terrain: the image's up along +z"
    at_least -0.1 "$(cam forward 2)" "Z-up terrain: looking down"
    c=$(covered sky.obj)
    at_least "$c" 0.15 "object in a skybox: share of pixels on it"
    for k in 0 1 2; do
        at_least 100 "$(cam position $k)" "object in a skybox: camera inside the box"
        at_least "$(cam position $k)" -100 "object in a skybox: camera inside the box"
    done
    covered pit.obj --view top >/dev/null
    at_least -0.999 "$(cam forward 1)" "--view top: straight down"
    at_least -0.999 "$(cam up 2)" "--view top: the front (+z) at the image's bottom"
    covered pit.obj --view front >/dev/null
    at_least -0.999 "$(cam forward 2)" "--view front: along -z"
    covered pit.obj --camera-pos 30,5,30 --look-at 0,0,0 >/dev/null # level: the world's up
    at_least "$(cam up 1)" 0.95 "--look-at from the automatic camera: a level view"
    # An object on a plinth (a sphere of 9,000 triangles on a box of 12, as
    # a helmet on its stand): the whole subject in view with a margin, no
    # pixel of it on the image's border (the trimmed box once cut the plinth,
    # a few corners against thousands, by the bottom edge).
    awk 'BEGIN { print "mtllib w.mtl"; print "usemtl white"; pi = 3.14159265358979; nu = 96; nv = 48
        for (j = 0; j <= nv; j++) for (i = 0; i <= nu; i++) {
            th = pi * j / nv; ph = 2 * pi * i / nu
            printf "v %.5f %.5f %.5f\n", sin(th) * cos(ph), cos(th), sin(th) * sin(ph) }
        for (j = 0; j < nv; j++) for (i = 0; i < nu; i++) {
            a = j * (nu + 1) + i + 1; b = a + 1; c = a + nu + 1; d = c + 1
            printf "f %d %d %d\nf %d %d %d\n", a, c, b, b, c, d }
        n = (nu + 1) * (nv + 1)
        for (k = 0; k < 8; k++) printf "v %g %g %g\n", (k % 2 ? 1.2 : -1.2), (int(k / 2) % 2 ? -1 : -1.8), (k >= 4 ? 1.2 : -1.2)
        split("1 2 4 1 4 3 5 7 8 5 8 6 1 5 6 1 6 2 3 4 8 3 8 7 1 3 7 1 7 5 2 6 8 2 8 4", f, " ")
        for (t = 0; t < 12; t++) printf "f %d %d %d\n", n + f[3 * t + 1], n + f[3 * t + 2], n + f[3 * t + 3] }' \
        >"$tmp/plinth.obj"
    covered plinth.obj >/dev/null
    for win in 0,0,64,1 0,47,64,48 0,0,1,48 63,0,64,48; do
        edge=$("$imgstat" --window $win "$tmp/f.png" | sed 's/.* mean=\([^,]*\),.*/\1/')
        [ "$edge" = 0 ] || fail "object on a plinth: the subject touches the border ($win: mean $edge)"
    done
    # Up guessed: an OBJ far flatter along z than across (a 100x100 park
    # with hills of 3 and posts of 8, exported z-up as GIS data is) is taken
    # as z-up without --up, and a note says so and how to undo it.
    awk 'BEGIN { print "mtllib w.mtl"; print "usemtl white"; N = 20
        for (j = 0; j <= N; j++) for (i = 0; i <= N; i++) {
            x = -50 + 5 * i; y = -50 + 5 * j; printf "v %g %g %g\n", x, y, 1.5 + 1.5 * sin(x / 10) * cos(y / 10) }
        for (j = 0; j < N; j++) for (i = 0; i < N; i++) {
            a = j * (N + 1) + i + 1; b = a + 1; c = a + N + 2; d = a + N + 1
            printf "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d }
        n = (N + 1) * (N + 1)
        for (p = 0; p < 9; p++) {
            x = -30 + 30 * (p % 3); y = -30 + 30 * int(p / 3)
            printf "v %g %g 0\nv %g %g 0\nv %g %g 8\nv %g %g 8\n", x - 1, y, x + 1, y, x + 1, y, x - 1, y
            printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4 } }' \
        >"$tmp/park.obj"
    "$render" -t 2 -r 64 48 --integrator albedo -o "$tmp/p.png" "$tmp/park.obj" 2>"$tmp/park.err" ||
        fail "park: exit $?"
    grep -qx "render: note: $tmp/park.obj is flat along z: taken as z-up (--up y: y-up)" "$tmp/park.err" ||
        fail "park: no note: $(cat "$tmp/park.err")"
    c=$(covered park.obj)
    at_least "$c" 0.2 "park, up guessed: share of pixels on geometry"
    at_least "$(cam up 2)" 0.25 "park, up guessed: the image's up along +z"
    at_least -0.1 "$(cam forward 2)" "park, up guessed: looking down along z"
    covered park.obj --up y >/dev/null
    at_least "$(cam up 1)" 0.25 "park, --up y: the image's up along +y"
    "$render" -t 2 -r 64 48 --up y -o "$tmp/p.png" "$tmp/park.obj" 2>"$tmp/park.err" || fail "park --up y"
    ! grep -q "note:" "$tmp/park.err" || fail "park --up y: a note: $(cat "$tmp/park.err")"
    # Not guessed: the pit level (y-up, flat along y), a quad in the xy
    # plane (a picture facing the viewer). The z-up terrain above is.
    printf 'v -5 -5 0\nv 5 -5 0\nv 5 5 0\nv -5 5 0\nf 1 2 3 4\n' >"$tmp/card.obj"
    "$render" -t 2 -r 64 48 -o "$tmp/p.png" "$tmp/zup.obj" 2>"$tmp/zup.err" || fail "zup: exit $?"
    grep -q "zup.obj is flat along z: taken as z-up" "$tmp/zup.err" || fail "zup: $(cat "$tmp/zup.err")"
    for s in pit card; do
        "$render" -t 2 -r 64 48 -o "$tmp/p.png" "$tmp/$s.obj" 2>"$tmp/$s.err" || fail "$s: exit $?"
        ! grep -q "note:" "$tmp/$s.err" || fail "$s: a note: $(cat "$tmp/$s.err")"
    done
    covered zup.obj --up z --view front >/dev/null
    at_least "$(cam forward 1)" 0.999 "--up z --view front: along +y"
    # A game level without a camera (a glTF: a 48x32 floor split into 4x3
    # rooms by walls 3 high with doors, open to the sky; one quad mesh, its
    # 40 instances placed by their nodes) is seen from a view that puts
    # geometry on at least a third of the image: three-quarter from 30
    # degrees put it on 28%, a band across the middle.
    quad=AAAAvwAAAAAAAAC/AAAAPwAAAAAAAAC/AAAAPwAAAAAAAAA/AAAAvwAAAAAAAAA/AAACAAEAAAADAAIA
    walls=$(awk 'BEGIN { W = 48; D = 32; H = 3; printf "{\"mesh\": 0, \"scale\": [%d, 1, %d]}", W, D
        along_x = ", {\"mesh\": 0, \"matrix\": [%g,0,0,0, 0,0,-1,0, 0,%g,0,0, %g,%g,%g,1]}"
        for (k = 0; k <= 3; k++) { z = -D / 2 + D * k / 3
            for (i = 0; i < 4; i++) { x0 = -W / 2 + 12 * i
                if (k > 0 && k < 3) { # a door of 2 in the middle
                    printf along_x, 5, H, x0 + 2.5, H / 2, z; printf along_x, 5, H, x0 + 9.5, H / 2, z }
                else printf along_x, 12, H, x0 + 6, H / 2, z } }
        for (k = 0; k <= 4; k++) for (j = 0; j < 3; j++)
            printf ", {\"mesh\": 0, \"matrix\": [0,%g,0,0, -1,0,0,0, 0,0,%g,0, %g,%g,%g,1]}", H, D / 3, -W / 2 + 12 * k, H / 2, -D / 2 + D * (j + 0.5) / 3 }')
    cat >"$tmp/dungeon.gltf" <<GLTF
{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [$(seq -s, 0 39)]}], "nodes": [$walls],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-0.5, 0, -0.5], "max": [0.5, 0, 0.5]},
               {"bufferView": 1, "componentType": 5123, "count": 6, "type": "SCALAR"}],
 "bufferViews": [{"buffer": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 12}],
 "buffers": [{"byteLength": 60, "uri": "data:application/octet-stream;base64,$quad"}]}
GLTF
    c=$(covered dungeon.gltf)
    [ "$(jq '.scene.instances' "$tmp/f.json")" = 40 ] || fail "dungeon: not 40 instances"
    at_least "$c" 0.334 "game level without a camera: share of pixels on geometry"
    at_least -0.1 "$(cam forward 1)" "game level: looking down"
    # A file's camera wins unless a view is asked for.
    tri_gltf '[0, 1]' '[{"mesh": 0}, {"camera": 0, "translation": [0.3, 0.3, 4]}]' "" \
        '"cameras": [{"type": "perspective", "perspective": {"yfov": 0.5, "znear": 0.1}}]' >"$tmp/cam.gltf"
    covered cam.gltf >/dev/null
    [ "$(from)" = file ] && [ "$(cam position 2)" = 4 ] || fail "the file's camera: $(from) at z $(cam position 2)"
    # The same glTF under another name is read as glTF throughout: its
    # camera where its node says (assimp 5.2's glTF camera, undone by what
    # the bytes are, not by the name; it was at z 8).
    cp "$tmp/cam.gltf" "$tmp/cam.scene"
    covered cam.scene >/dev/null
    [ "$(cam position 2)" = 4 ] || fail "a glTF named .scene: its camera at z $(cam position 2)"
    covered cam.gltf --up z >/dev/null
    [ "$(from)" = file ] || fail "--up alone replaced the file's camera"
    covered cam.gltf --view right >/dev/null
    [ "$(from)" = auto ] || fail "--view right kept the file's camera"
    at_least -0.999 "$(cam forward 0)" "--view right: along -x"
    covered cam.gltf --camera-pos 0,0,9 >/dev/null
    [ "$(from)" = "command line" ] || fail "--camera-pos: from '$(from)'"
    for bad in "--up w" "--view sideways"; do
        # shellcheck disable=SC2086 # the option and its value
        "$render" $bad "$tmp/pit.obj" 2>"$tmp/err" && fail "$bad: exit 0"
        grep -q "is not" "$tmp/err" || fail "$bad: $(cat "$tmp/err")"
    done
    ;;
first_image)
    # A first image a user can see: a dim scene's PNG is exposed up (its lit
    # pixels to a mean luminance of 0.18) and the summary line says by how
    # much; the EXR stays linear; --exposure gives the stops instead. A
    # scene that is mostly metal or glass, with nothing around it, gets a
    # note naming --envmap.
    imgstat=$testdata # this case's fifth argument
    quad() { # quad NAME MTL-LINES
        printf 'newmtl m\n%s\n' "$2" >"$tmp/$1.mtl"
        printf 'mtllib %s.mtl\nusemtl m\nv -5 -5 0\nv 5 -5 0\nv 5 5 0\nv -5 5 0\nf 1 2 3 4\n' "$1" \
            >"$tmp/$1.obj"
    }
    mean() { "$imgstat" "$1" | sed 's/.* mean=\([^,]*\),.*/\1/'; }
    quad dim 'Kd 0.02 0.02 0.02'
    quad bright 'Kd 0.8 0.8 0.8'
    quad metal $'Kd 0.9 0.9 0.9\nPm 1\nPr 0.1'
    "$render" -t 2 -r 32 32 -o "$tmp/dim.exr" "$tmp/dim.obj" 2>/dev/null || fail "dim exr"
    "$render" -t 2 -r 32 32 -o "$tmp/dim.png" "$tmp/dim.obj" 2>"$tmp/err" || fail "dim png"
    stops=$(sed -n 's/.*, exposed +\([0-9.]*\) stops (dim; --exposure 0: as rendered).*/\1/p' "$tmp/err")
    [ -n "$stops" ] || fail "dim: no exposure in the summary: $(cat "$tmp/err")"
    exr=$(mean "$tmp/dim.exr") png=$(mean "$tmp/dim.png")
    awk -v e="$exr" -v p="$png" -v s="$stops" 'BEGIN { w = e * 2 ^ s; exit !(p > 0.97 * w && p < 1.03 * w && s > 4) }' ||
        fail "dim: PNG mean $png, EXR mean $exr exposed $stops stops"
    # The lit pixels, the quad's (evenly lit, so its brightest pixel is its
    # mean), at the key, middle grey, though they cover under half the view:
    # the exposure weighs luminance by coverage (alpha), not by pixel.
    lit=$("$imgstat" "$tmp/dim.png" | sed 's/.* max=\([^,]*\),.*/\1/')
    awk -v m="$lit" 'BEGIN { exit !(m > 0.17 && m < 0.19) }' ||
        fail "dim: the lit pixels exposed to $lit, not 0.18"
    "$render" -t 2 -r 32 32 --exposure 0 -o "$tmp/dim0.png" "$tmp/dim.obj" 2>"$tmp/err" || fail "dim --exposure 0"
    ! grep -q exposed "$tmp/err" || fail "--exposure 0: $(cat "$tmp/err")"
    awk -v e="$exr" -v p="$(mean "$tmp/dim0.png")" 'BEGIN { exit !(p > 0.9 * e && p < 1.1 * e) }' ||
        fail "--exposure 0: PNG mean $(mean "$tmp/dim0.png"), EXR $exr"
    "$render" -t 2 -r 32 32 --exposure 0 --exposure auto -o "$tmp/a.png" "$tmp/dim.obj" 2>"$tmp/err" &&
        grep -q "exposed +$stops stops" "$tmp/err" || fail "--exposure auto: $(cat "$tmp/err")"
    "$render" -t 2 -r 32 32 -o "$tmp/b.png" "$tmp/bright.obj" 2>"$tmp/err" || fail "bright"
    ! grep -q "exposed\|note:" "$tmp/err" || fail "bright: $(cat "$tmp/err")"
    "$render" -t 2 -r 32 32 -o "$tmp/m.png" "$tmp/metal.obj" 2>"$tmp/err" || fail "metal"
    grep -qx "render: note: $tmp/metal.obj is mostly metal, which shows its surroundings: with no --envmap they are black (--envmap FILE.exr gives it some)" \
        "$tmp/err" || fail "metal: $(cat "$tmp/err")"
    "$render" -t 2 -r 32 32 --envmap "$tmp/tex/tex00.png" -o "$tmp/m.png" "$tmp/metal.obj" 2>"$tmp/err" ||
        fail "metal --envmap"
    ! grep -q "note:" "$tmp/err" || fail "metal --envmap: $(cat "$tmp/err")"
    # Glass: an OBJ 'd' of 0.2 lets most light through (it was drawn
    # opaque), and with nothing around it, a note says so.
    quad glass $'Kd 0.8 0.8 0.8\nd 0.2'
    "$render" -t 2 -r 32 32 --exposure 0 -o "$tmp/g.png" "$tmp/glass.obj" 2>"$tmp/err" || fail "glass"
    grep -qx "render: note: $tmp/glass.obj is mostly glass, which shows its surroundings: with no --envmap they are black (--envmap FILE.exr gives it some)" \
        "$tmp/err" || fail "glass: $(cat "$tmp/err")"
    "$render" -t 2 -r 32 32 --exposure 0 -o "$tmp/b.png" "$tmp/bright.obj" 2>/dev/null || fail "bright"
    awk -v g="$(mean "$tmp/g.png")" -v b="$(mean "$tmp/b.png")" 'BEGIN { exit !(g > 0.1 * b && g < 0.35 * b) }' ||
        fail "glass: mean $(mean "$tmp/g.png"), not about 0.2 of the opaque quad's $(mean "$tmp/b.png")"
    ;;
lighting)
    # Lighting that shows a scene: one lit only by a few small emitters in a
    # large room (black before) gets the default light as well, and says so;
    # a well-lit one does not. A black image is named, with its likely cause.
    imgstat=$testdata # this case's fifth argument
    room() { # room LAMP-SIZE: a 20x20 floor and three square lamps LAMP-SIZE across, 2 up
        awk -v s="$1" 'BEGIN { print "mtllib e.mtl"; print "usemtl white"; n = 0
            for (i = 0; i < 20; i++) for (j = 0; j < 20; j++) { x = i - 10; z = j - 10
                printf "v %d 0 %d\nv %d 0 %d\nv %d 0 %d\nv %d 0 %d\n", x, z, x + 1, z, x + 1, z + 1, x, z + 1
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 4, n + 3, n + 1, n + 3, n + 2; n += 4 }
            print "usemtl lamp"
            for (k = 0; k < 3; k++) { x = -5 + 5 * k
                printf "v %g 2 0\nv %g 2 0\nv %g 2 %g\nv %g 2 %g\n", x, x + s, x + s, s, x, s
                printf "f %d %d %d\nf %d %d %d\n", n + 1, n + 2, n + 3, n + 1, n + 3, n + 4; n += 4 } }'
    }
    printf 'newmtl white\nKd 0.8 0.8 0.8\nnewmtl lamp\nKd 0 0 0\nKe 2 2 2\n' >"$tmp/e.mtl"
    room 0.1 >"$tmp/dim.obj"
    room 4 >"$tmp/lit.obj"
    mean() { "$imgstat" "$1" | sed 's/.* mean=[^,]*,\([^,]*\),.*/\1/'; }
    "$render" -t 2 -r 48 36 --spp 4 -o "$tmp/dim.exr" "$tmp/dim.obj" 2>"$tmp/err" || fail "dim: exit $?"
    grep -q "lights are too weak to show it (about .* of the default light's irradiance): the default light is added" "$tmp/err" ||
        fail "dim: no word of the default light: $(cat "$tmp/err")"
    awk -v m="$(mean "$tmp/dim.exr")" 'BEGIN { exit !(m > 0.05) }' || fail "dim: still dark: mean $(mean "$tmp/dim.exr")"
    "$render" -t 2 -r 48 36 --spp 4 -o "$tmp/lit.exr" "$tmp/lit.obj" 2>"$tmp/err" || fail "lit: exit $?"
    # One line, piped or not: what was written, its size, spp and time.
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "lit: $(cat "$tmp/err")"
    grep -Eq "^render: wrote $tmp/lit.exr: 48x36, 4 spp, [0-9.]+ (bytes|KB|MB), in [0-9.]+ s \(render [0-9.]+ s\)$" \
        "$tmp/err" || fail "lit: the last line: $(cat "$tmp/err")"
    # Near-black images, each with its cause; --quiet says nothing.
    "$render" -t 2 -r 32 24 --spp 1 --camera-pos 0,50,0 --look-at 0,100,0 -o "$tmp/a.png" \
        "$tmp/lit.obj" 2>"$tmp/err" || fail "away: exit $?"
    grep -q "a.png is black: the camera sees no geometry" "$tmp/err" || fail "away: $(cat "$tmp/err")"
    "$render" -t 2 -r 32 24 --spp 1 --exposure -30 -o "$tmp/b.png" "$tmp/lit.obj" 2>"$tmp/err" ||
        fail "exposure: exit $?"
    grep -q "b.png is nearly black (mean luminance .*): --exposure -30" "$tmp/err" || fail "exposure: $(cat "$tmp/err")"
    printf 'newmtl white\nKd 0 0 0\nnewmtl lamp\nKd 0 0 0\n' >"$tmp/e.mtl" # all black
    "$render" -t 2 -r 32 24 --spp 1 --integrator eyelight -o "$tmp/c.exr" "$tmp/lit.obj" 2>"$tmp/err" ||
        fail "black: exit $?"
    grep -q "c.exr is nearly black (mean luminance .*): the surfaces in view are black" "$tmp/err" ||
        fail "black: $(cat "$tmp/err")"
    "$render" --quiet -t 2 -r 32 24 --spp 1 --integrator eyelight -o "$tmp/c.exr" "$tmp/lit.obj" 2>"$tmp/err" ||
        fail "quiet: exit $?"
    [ ! -s "$tmp/err" ] || fail "--quiet: $(cat "$tmp/err")"
    # --stats counts the scene (assimp splits the OBJ by material; the default light).
    "$render" --quiet --stats -t 2 -r 32 24 --spp 1 -o "$tmp/c.exr" "$tmp/lit.obj" 2>"$tmp/err" ||
        fail "stats: exit $?"
    grep -q "scene: 806 triangles, 2 meshes, 2 instances, 1 lights, camera from auto" "$tmp/err" ||
        fail "stats: $(cat "$tmp/err")"
    ;;
out_of_range)
    # A scene's colours beyond what a pixel can sum (an audit found each):
    # each is brought into range as it loads, and every image is finite and
    # not below 0. A base colour of -5 made negative pixels; 1e300 NaN ones;
    # an emission of 1e38 infinite ones over 8 samples; a light of 1e300 a
    # black image; a texture of infinite texels infinite pixels.
    imgstat=$testdata # this case's fifth argument
    finite() { # finite IMAGE WHAT: every pixel a number >= 0 (and, with a third word, one above 0)
        local s
        s=$("$imgstat" "$1" | head -1) || fail "$2: imgstat: $s"
        [[ $s == *nan* || $s == *inf* ]] && fail "$2: not finite: $s"
        local lo=${s#*min=} hi=${s#*max=}
        lo=${lo%% *} hi=${hi%% *}
        [[ $lo == -* || $lo == *,-* ]] && fail "$2: below 0: $s"
        [ -z "${3:-}" ] || [ "$hi" != 0,0,0 ] || fail "$2: black: $s"
    }
    with_material() { # with_material MATERIAL [MORE-MEMBERS]
        tri_gltf '[0]' '[{"mesh": 0}]' '' "\"materials\": [$1]${2:+, $2}" |
            sed 's|"attributes": {"POSITION": 0}}|"attributes": {"POSITION": 0}, "material": 0}|'
    }
    with_material '{"pbrMetallicRoughness": {"baseColorFactor": [-5, -5, -5, 1]}}' >"$tmp/neg.gltf"
    with_material '{"pbrMetallicRoughness": {"baseColorFactor": [1e300, 1e300, 1e300, 1]},
 "emissiveFactor": [-1e300, -1e300, -1e300]}' >"$tmp/huge.gltf"
    # ... and after KHR_materials_emissive_strength: 1e20 times 9.9e29 was
    # infinite (a review).
    with_material '{"emissiveFactor": [1e20, 1e20, 1e20],
 "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 9.9e29}}}' \
        '"extensionsUsed": ["KHR_materials_emissive_strength"]' >"$tmp/strong.gltf"
    for integrator in eyelight path ao albedo; do
        for f in neg huge strong; do
            "$render" --quiet -r 16 16 --spp 2 --integrator $integrator -o "$tmp/$f.exr" "$tmp/$f.gltf" ||
                fail "$f, $integrator: exit $?"
            # the base colour -5 renders black (0 now); the others, lit
            finite "$tmp/$f.exr" "$f.gltf, $integrator" ${f/neg/}
        done
    done
    printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nmtllib hot.mtl\nusemtl hot\nf 1 2 3\n' >"$tmp/hot.obj"
    printf 'newmtl hot\nKd 0.5 0.5 0.5\nKe 1e38 1e38 1e38\n' >"$tmp/hot.mtl"
    "$render" --quiet -r 16 16 --spp 8 -o "$tmp/hot.exr" "$tmp/hot.obj" || fail "Ke 1e38: exit $?"
    finite "$tmp/hot.exr" "Ke 1e38" lit
    with_material '{"pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.8, 0.8, 1]}}' \
        '"extensionsUsed": ["KHR_lights_punctual"], "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 1e300}]}}' |
        sed 's|"nodes": \[{"mesh": 0}\]|"nodes": [{"mesh": 0}, {"extensions": {"KHR_lights_punctual": {"light": 0}}, "translation": [0.3, 0.3, 1]}]|; s|"scenes": \[{"nodes": \[0\]}\]|"scenes": [{"nodes": [0, 1]}]|' \
        >"$tmp/light.gltf"
    "$render" --quiet -r 16 16 --spp 4 -o "$tmp/light.exr" "$tmp/light.gltf" || fail "light 1e300: exit $?"
    finite "$tmp/light.exr" "light 1e300" lit
    "$(dirname "$imgstat")/imgconvert" --exposure 64 "$tmp/tex/tex00.png" "$tmp/inf.exr" ||
        fail "imgconvert"
    "$imgstat" "$tmp/inf.exr" | grep -q 'max=inf' || fail "the texture is not infinite: $("$imgstat" "$tmp/inf.exr")"
    quad_scene "$tmp/inf.exr" "$tmp/infq"
    for integrator in eyelight path; do
        "$render" --quiet -r 16 16 --spp 2 --integrator $integrator -o "$tmp/q.exr" "$tmp/infq.gltf" ||
            fail "infinite texels, $integrator: exit $?"
        finite "$tmp/q.exr" "infinite texels, $integrator" lit
    done
    ;;
gltf_features)
    # glTF: alphaMode BLEND as transparency (a red quad of alpha 0.3 before a
    # white one averages to 0.3 red + 0.7 white; it rendered opaque red); an
    # extension the file uses that render ignores named once in a warning; a
    # required one, an error naming it.
    imgstat=$testdata # this case's fifth argument
    blend_gltf() { # blend_gltf MODE [EXTRA-MEMBERS]: a red quad of alpha 0.3 (MODE) in front of a white one
        local b64=AAAAAAAAAAAAAIA/AACAPwAAAAAAAIA/AAAAAAAAgD8AAIA/AACAvwAAgL8AAAAAAAAAQAAAgL8AAAAAAACAvwAAAEAAAAAA
        printf '{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 1]}],
     "nodes": [{"mesh": 0}, {"mesh": 1}],
     "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]},
                {"primitives": [{"attributes": {"POSITION": 1}, "material": 1}]}],
     "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 0, 0, 0.3], "metallicFactor": 0},
                    "alphaMode": "%s", "doubleSided": true},
                   {"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0},
                    "doubleSided": true}],
     "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                    "min": [0, 0, 1], "max": [1, 1, 1]},
                   {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3",
                    "min": [-1, -1, 0], "max": [2, 2, 0]}],
     "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 36}],
     "buffers": [{"byteLength": 72, "uri": "data:application/octet-stream;base64,%s"}]%s}\n' "$1" "$b64" "${2:+, $2}"
    }
    look() { # look SCENE OUT: 16x16 pixels inside the front quad
        "$render" --quiet -t 2 -r 16 16 --spp 256 --integrator eyelight --camera-pos 0.3,0.3,3 \
            --look-at 0.3,0.3,0 --fov 5 -o "$2" "$1" || fail "$1: exit $?"
        "$imgstat" "$2" | sed 's/.* mean=[^,]*,\([^,]*\),.*/\1/' # green: the white behind
    }
    blend_gltf BLEND >"$tmp/blend.gltf"
    blend_gltf OPAQUE >"$tmp/opaque.gltf"
    g=$(look "$tmp/blend.gltf" "$tmp/blend.exr")
    awk -v g="$g" 'BEGIN { exit !(g > 0.65 && g < 0.75) }' || fail "BLEND: green $g, want 0.7"
    g=$(look "$tmp/opaque.gltf" "$tmp/opaque.exr")
    [ "$g" = 0 ] || fail "OPAQUE: green $g, want 0"
    # No alphaMode is glTF's OPAQUE: the alpha of 0.3 is not a blend (as an
    # OBJ's 'd' of 0.3 is).
    blend_gltf OPAQUE | sed 's/"alphaMode": "OPAQUE", //' >"$tmp/nomode.gltf"
    ! grep -q alphaMode "$tmp/nomode.gltf" || fail "nomode.gltf still names alphaMode"
    g=$(look "$tmp/nomode.gltf" "$tmp/nomode.exr")
    [ "$g" = 0 ] || fail "no alphaMode: green $g, want 0"
    "$render" -t 2 -r 16 16 --spp 2 -o "$tmp/b1.exr" "$tmp/blend.gltf" &&
        "$render" -t 1 --tile 4 -r 16 16 --spp 2 -o "$tmp/b2.exr" "$tmp/blend.gltf" 2>/dev/null ||
        fail "BLEND: exit $?"
    "$imgdiff" --quiet "$tmp/b1.exr" "$tmp/b2.exr" || fail "BLEND: the image depends on -t or --tile"
    blend_gltf MASK '"extensionsUsed": ["KHR_texture_transform", "KHR_materials_specular",
 "KHR_lights_punctual", "KHR_materials_emissive_strength"]' >"$tmp/used.gltf"
    "$render" -t 2 -r 16 16 --spp 1 -o "$tmp/u.png" "$tmp/used.gltf" 2>"$tmp/err" || fail "used: exit $?"
    [ "$(grep -c "ignores the glTF extensions KHR_texture_transform (texCoord), KHR_materials_specular (its textures)$" "$tmp/err")" = 1 ] ||
        fail "used: $(cat "$tmp/err")"
    # Names whole, however long (they were cut to 31 bytes).
    blend_gltf MASK '"extensionsUsed": ["KHR_materials_pbrSpecularGlossiness"]' >"$tmp/long.gltf"
    "$render" -t 2 -r 16 16 --spp 1 -o "$tmp/l.png" "$tmp/long.gltf" 2>"$tmp/err" || fail "long: exit $?"
    grep -q "ignores the glTF extensions KHR_materials_pbrSpecularGlossiness$" "$tmp/err" ||
        fail "long: $(cat "$tmp/err")"
    blend_gltf MASK '"extensionsUsed": ["KHR_materials_transmission", "KHR_lights_punctual"],
 "extensionsRequired": ["KHR_materials_transmission"]' >"$tmp/req.gltf"
    "$render" -t 2 -r 16 16 --spp 1 -o "$tmp/r.png" "$tmp/req.gltf" 2>"$tmp/err" && fail "required: exit 0"
    grep -q "req.gltf: needs the glTF extensions KHR_materials_transmission, which render does not implement" \
        "$tmp/err" || fail "required: $(cat "$tmp/err")"
    [ ! -e "$tmp/r.png" ] || fail "required: an image was written"
    # KHR_materials_emissive_strength (read from the JSON: assimp 5.2 does not):
    # the red quad glows white x 5, so green (the emission alone) is 5.
    blend_gltf OPAQUE '"extensionsUsed": ["KHR_materials_emissive_strength"]' |
        sed 's/"alphaMode": "OPAQUE",/"alphaMode": "OPAQUE", "emissiveFactor": [1, 1, 1],\
 "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 5}},/' >"$tmp/glow.gltf"
    g=$(look "$tmp/glow.gltf" "$tmp/glow.exr")
    awk -v g="$g" 'BEGIN { exit !(g > 4.99 && g < 5.01) }' || fail "emissive strength: green $g, want 5"
    # The strength counts before the lights are chosen: an emitter of 0.001 at
    # strength 1000 lights the scene itself; no default light is added.
    blend_gltf OPAQUE '"extensionsUsed": ["KHR_materials_emissive_strength"]' |
        sed 's/"alphaMode": "OPAQUE",/"alphaMode": "OPAQUE", "emissiveFactor": [0.001, 0.001, 0.001],\
 "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 1000}},/' >"$tmp/glow2.gltf"
    "$render" -t 2 -r 16 16 --spp 1 -o "$tmp/glow2.png" "$tmp/glow2.gltf" 2>"$tmp/err" ||
        fail "glow2: exit $?"
    grep -q "too weak" "$tmp/err" && fail "emissive strength counted after the lights: $(cat "$tmp/err")"
    # A quantized triangle (KHR_mesh_quantization, required): assimp 5.2 reads
    # no triangles from it; the failure names what the file needs.
    printf '{"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_mesh_quantization"],
 "extensionsRequired": ["KHR_mesh_quantization"], "scene": 0, "scenes": [{"nodes": [0]}],
 "nodes": [{"mesh": 0}], "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
 "accessors": [{"bufferView": 0, "componentType": 5122, "normalized": true, "count": 3,
                "type": "VEC3", "min": [0, 0, 0], "max": [32767, 32767, 0]}],
 "bufferViews": [{"buffer": 0, "byteLength": 18, "byteStride": 6}],
 "buffers": [{"byteLength": 20, "uri": "data:application/octet-stream;base64,AAAAAAAA/38AAAAAAAD/fwAAAAA="}]}\n' \
        >"$tmp/quant.gltf"
    "$render" --quiet -t 2 -r 16 16 -o "$tmp/q.png" "$tmp/quant.gltf" 2>"$tmp/err" && fail "quantized: exit 0"
    grep -q "needs the glTF extensions KHR_mesh_quantization" "$tmp/err" || fail "quantized: $(cat "$tmp/err")"
    # KHR_texture_transform, by the worked example of its specification:
    # offset [0, 1], rotation pi/2, scale [0.5, 0.5] reads only the image's
    # lower-left quarter. A unit quad (glTF UVs 0..1) with a 32x32 texture of
    # four quarters, red, green (top right), blue (lower left), white: seen
    # near its middle, all blue with the transform; the rotation the other
    # way reads the green quarter, none reads all four.
    tt_gltf() { # tt_gltf [TEXTURE-INFO-EXTENSIONS]
        local png=iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAAAMElEQVR42u3NwQkAMAwDMe+/dDqDHyEUZO5rlEmqMssBAAAA4ARoH+0AAAAA8AXwAK5N+kxHCN2JAAAAAElFTkSuQmCC
        local b64=AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAACAPwAAgD8AAAAAAAAAAAAAgD8AAAAAAAAAAAAAgD8AAIA/AACAPwAAgD8AAAAAAAAAAAAAAAAAAAEAAgAAAAIAAwA=
        printf '{"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_texture_transform"],
 "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2, "material": 0}]}],
 "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0%s}, "metallicFactor": 0}}],
 "textures": [{"source": 0}], "images": [{"uri": "data:image/png;base64,%s"}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
               {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
               {"bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR"}],
 "bufferViews": [{"buffer": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 32},
                 {"buffer": 0, "byteOffset": 80, "byteLength": 12}],
 "buffers": [{"byteLength": 92, "uri": "data:application/octet-stream;base64,%s"}]}\n' "${1:+, $1}" "$png" "$b64"
    }
    rgb() { # rgb SCENE: the mean colour near the quad's middle, "R G B"
        "$render" --quiet -t 2 -r 16 16 --spp 4 --integrator eyelight --camera-pos 0.5,0.5,3 \
            --look-at 0.5,0.5,0 --fov 8 -o "$tmp/tt.exr" "$1" || fail "$1: exit $?"
        "$imgstat" "$tmp/tt.exr" | sed 's/.* mean=\([^,]*\),\([^,]*\),\([^ ]*\) .*/\1 \2 \3/'
    }
    xf='"extensions": {"KHR_texture_transform": {"offset": [0, 1], "rotation": %s, "scale": [0.5, 0.5]}}'
    tt_gltf "$(printf "$xf" 1.57079632679)" >"$tmp/tt.gltf"
    tt_gltf "$(printf "$xf" -1.57079632679)" >"$tmp/tt_back.gltf"
    tt_gltf >"$tmp/tt_none.gltf"
    read -r r g b <<<"$(rgb "$tmp/tt.gltf")"
    awk -v r="$r" -v g="$g" -v b="$b" 'BEGIN { exit !(b > 0.5 && r < b / 100 && g < b / 100) }' ||
        fail "texture transform: mean $r $g $b, want blue alone"
    read -r r g b <<<"$(rgb "$tmp/tt_back.gltf")"
    awk -v r="$r" -v g="$g" -v b="$b" 'BEGIN { exit !(g > 0.5 && r < g / 100 && b < g / 100) }' ||
        fail "texture transform, rotation the other way: mean $r $g $b, want green alone"
    read -r r g b <<<"$(rgb "$tmp/tt_none.gltf")"
    awk -v r="$r" -v g="$g" -v b="$b" 'BEGIN { exit !(r > 0.1 && g > 0.1 && b > 0.1) }' ||
        fail "no texture transform: mean $r $g $b, want the four quarters"
    ;;
metadata)
    # What an image says of its render: EXR attributes typed (ints and
    # doubles as such, the counters included), PNG text chunks with the same.
    "$render" --quiet -t 2 -r 16 16 --spp 3 --tile 8 --max-depth 5 -o "$tmp/m.exr" "$scene" ||
        fail "EXR: exit $?"
    "$render" --quiet -t 2 -r 16 16 --spp 3 -o "$tmp/m.png" "$scene" || fail "PNG: exit $?"
    # An EXR attribute is its name, NUL, its type's name, NUL, ...
    for a in rt:spp.int rt:threads.int rt:ranks.int rt:tile.int rt:max_depth.int \
        rt:render_seconds.double rt:rays.double rt:shading_points.double rt:lookups.double \
        rt:interns.double rt:seed.string rt:image_options.string; do
        grep -q -a "$a" "$tmp/m.exr" || fail "EXR: no attribute ${a%.*} of type ${a##*.}"
    done
    # ... then a 4-byte size and the value: an int's, little-endian, as run.
    exr_int() {
        local off
        off=$(grep -aboP "$1\\x00int\\x00" "$tmp/m.exr" | head -1 | cut -d: -f1)
        [ -n "$off" ] && od -An -t d4 -j $((off + ${#1} + 5 + 4)) -N 4 "$tmp/m.exr" | tr -d ' '
    }
    for a in rt:spp=3 rt:threads=2 rt:ranks=1 rt:tile=8 rt:max_depth=5; do
        [ "$(exr_int "${a%=*}")" = "${a#*=}" ] || fail "EXR: ${a%=*} is '$(exr_int "${a%=*}")', want ${a#*=}"
    done
    # A tEXt chunk is its key, NUL, its text: the same keys, and the
    # values as run.
    for a in rt:spp rt:threads rt:ranks rt:tile rt:max_depth rt:render_seconds rt:rays \
        rt:shading_points rt:lookups rt:interns rt:seed rt:image_options; do
        grep -q -aP "$a\\x00" "$tmp/m.png" || fail "PNG: no $a"
    done
    for a in rt:threads=2 rt:ranks=1 rt:tile=32 rt:max_depth=8; do
        grep -q -aP "${a%=*}\\x00${a#*=}(?![0-9])" "$tmp/m.png" || fail "PNG: ${a%=*} is not ${a#*=}"
    done
    grep -q -a "rt:spp.3" "$tmp/m.png" || fail "PNG: no rt:spp 3"
    grep -q -a "rt:image_options.scene " "$tmp/m.png" || fail "PNG: no rt:image_options"
    n=$(grep -a -o "rt:rays.[0-9]*" "$tmp/m.png" | tr -c '0-9\n' ' ' | awk '{ print $NF }')
    [ -n "$n" ] && [ "$n" -gt 0 ] || fail "PNG: rt:rays '$n'"
    ;;
memory_threads)
    # Peak memory does not grow with the thread count: six 2048x2048
    # textures (16 MB each decoded) under a 16 MB tile cap, at -t N and
    # -t 4N (N: the CPUs): 4N may add nothing like a decode per extra
    # thread (it added 25 MB each before decodes were capped and went by
    # rows). The cap itself: files open at most one per CPU the process may
    # run on, so pinned to one CPU, 4N workers open the six one at a time
    # (without the cap, as many at once as workers reach them).
    if [ -n "$testdata" ]; then # this case's fifth argument: RT_SANITIZE
        echo "skipped: a sanitizer's allocator keeps freed memory in quarantine"
        exit 77
    fi
    mkdir -p "$tmp/big"
    "$texgen" --count 6 --size 2048 "$tmp/big" >/dev/null || fail texgen
    for i in 0 1 2 3 4 5; do printf 'newmtl m%d\nKd 1 1 1\nmap_Kd big/tex%02d.png\n' $i $i; done >"$tmp/big.mtl"
    {
        echo "mtllib big.mtl"
        for i in 0 1 2 3 4 5; do echo "v $i 0 0"; echo "v $((i + 1)) 0 0"; echo "v $i 1 0"; done
        echo "vt 0 0"; echo "vt 1 0"; echo "vt 0 1"
        for i in 0 1 2 3 4 5; do echo "usemtl m$i"; echo "f $((3 * i + 1))/1 $((3 * i + 2))/2 $((3 * i + 3))/3"; done
    } >"$tmp/big.obj"
    n=$(nproc)
    rss() { # threads: the run's peak_rss in MiB
        "$render" --quiet -t "$1" -r 96 16 --camera-pos 3,0.5,6 --look-at 3,0.5,0 --max-memory-mb 16 \
            --stats-json "$tmp/rss.json" -o "$tmp/rss.png" "$tmp/big.obj" || fail "-t $1: exit $?"
        echo $(($(json peak_rss "$tmp/rss.json") >> 20))
    }
    a=$(rss "$n") b=$(rss $((4 * n)))
    echo "peak RSS: -t $n $a MiB, -t $((4 * n)) $b MiB"
    [ "$b" -le $((a + 32)) ] || fail "peak memory grew with threads: -t $n $a MiB, -t $((4 * n)) $b MiB"
    cpu=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//; s/[-,].*//') # the first CPU it may use
    if [ -z "$cpu" ] || ! taskset -c "$cpu" true 2>/dev/null; then
        echo "skipped: no taskset, or it may not pin (the cap is not checked)"
        exit 77
    fi
    taskset -c "$cpu" "$render" --quiet -t $((4 * n)) -r 96 16 --camera-pos 3,0.5,6 --look-at 3,0.5,0 \
        --max-memory-mb 16 --stats-json "$tmp/one.json" -o "$tmp/one.png" "$tmp/big.obj" ||
        fail "pinned to CPU $cpu: exit $?"
    at_once=$(json peak_decoding "$tmp/one.json")
    [ "$at_once" = 1 ] || fail "pinned to one CPU, $at_once files opened at once"
    ;;
threads)
    # More threads than cores over a shared texture cache (label stress: the
    # tsan preset runs it under ThreadSanitizer). -t 8 runs 8 workers that
    # each render tiles, the tiles add up, and the image is -t 1's, bit for
    # bit. Each worker gets tiles if it gets a core before they run out: 16
    # samples a pixel make the udim scene's -t 8 render some 60 ms on 2
    # cores, many time slices. (At 2, 15 ms once PNGs loaded faster: with
    # both cores busy, a worker got none in 1 of 75 runs; at 16, 0 of 75.)
    scene=$testdata
    opts=(--quiet -r 160 120 --tile 8 --spp 16 --max-memory-mb 4)
    "$render" "${opts[@]}" -t 1 -o "$tmp/t1.exr" "$scene" || fail "-t 1: exit $?"
    "$render" "${opts[@]}" -t 8 --stats-json "$tmp/t8.json" -o "$tmp/t8.exr" "$scene" ||
        fail "-t 8: exit $?"
    [ "$(json threads "$tmp/t8.json")" = 8 ] || fail "-t 8 ran $(json threads "$tmp/t8.json") workers"
    tiles=$(jq -r '.thread_tiles | map(tostring) | join(" ")' "$tmp/t8.json")
    read -r -a per <<<"$tiles"
    [ "${#per[@]}" = 8 ] || fail "thread_tiles has ${#per[@]} entries, want 8: $tiles"
    sum=0
    for n in "${per[@]}"; do
        [ "$n" -ge 1 ] || fail "a worker of -t 8 rendered no tile: $tiles"
        sum=$((sum + n))
    done
    [ "$sum" = 300 ] && [ "$(json tiles_rendered "$tmp/t8.json")" = 300 ] ||
        fail "the workers rendered $sum tiles, want 300"
    "$imgdiff" --tolerance 0 "$tmp/t1.exr" "$tmp/t8.exr" >/dev/null ||
        fail "-t 8's image is not -t 1's"
    # Opening lazily, the workers that find a file being opened open others
    # the scene names instead of waiting: the same image, every file once.
    "$render" "${opts[@]}" -t 8 --open-textures lazy --stats-json "$tmp/lazy.json" \
        -o "$tmp/lazy.exr" "$scene" || fail "-t 8 lazy: exit $?"
    "$imgdiff" --tolerance 0 "$tmp/t1.exr" "$tmp/lazy.exr" >/dev/null ||
        fail "-t 8 lazy's image is not -t 1's"
    [ "$(json files_opened "$tmp/lazy.json")" = "$(json files_opened "$tmp/t8.json")" ] ||
        fail "lazy opened $(json files_opened "$tmp/lazy.json") files, upfront $(json files_opened "$tmp/t8.json")"
    ;;
cutout_threads)
    # Many quads cut out by noise textures (map_d), at 8 and 32 threads, the
    # path integrator (shadow rays run the filter too), a 1 MB tile cache.
    # Under the tsan preset any race in the filter's lookups fails the run.
    "$texgen" --count 4 --size 256 "$tmp/tex" >/dev/null || fail texgen
    for i in 0 1 2 3; do printf 'newmtl c%d\nKd 0.8 0.8 0.8\nmap_Kd tex/tex%02d.png\nmap_d tex/tex%02d.png\n' $i $i $(((i + 1) % 4)); done >"$tmp/cut.mtl"
    {
        echo "mtllib cut.mtl"
        for z in 0 1 2 3 4 5 6 7; do
            echo "v -2 -2 -$z"; echo "v 2 -2 -$z"; echo "v 2 2 -$z"; echo "v -2 2 -$z"
        done
        echo "vt 0 0"; echo "vt 1 0"; echo "vt 1 1"; echo "vt 0 1"
        for z in 0 1 2 3 4 5 6 7; do
            b=$((4 * z + 1))
            echo "usemtl c$((z % 4))"; echo "f $b/1 $((b + 1))/2 $((b + 2))/3"; echo "f $b/1 $((b + 2))/3 $((b + 3))/4"
        done
    } >"$tmp/cut.obj"
    for t in 8 32; do
        "$render" --quiet -t $t -r 64 48 --spp 2 --integrator path --max-memory-mb 1 \
            --camera-pos 0,0,5 --look-at 0,0,0 -o "$tmp/cut$t.exr" "$tmp/cut.obj" ||
            fail "-t $t: exit $?"
    done
    "$imgdiff" --tolerance 0 "$tmp/cut8.exr" "$tmp/cut32.exr" >/dev/null ||
        fail "the image depends on the thread count"
    ;;
exr_module)
    # OpenEXR is loaded on first use (texture/exr_module.h): a PNG render of
    # PNG textures never maps it, an EXR output does, and a module that
    # cannot load fails an EXR render before it starts, in one line.
    maps_openexr() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -c 'file=libOpenEXR'; }
    n=$(maps_openexr "$render" --quiet -r 32 24 -o "$tmp/a.png" "$scene")
    [ "$n" = 0 ] || fail "a PNG render mapped OpenEXR ($n times)"
    [ -s "$tmp/a.png" ] || fail "the PNG render wrote nothing"
    n=$(maps_openexr "$render" --quiet -r 32 24 -o "$tmp/a.exr" "$scene")
    [ "$n" -ge 1 ] || fail "an EXR render did not map OpenEXR"
    [ -s "$tmp/a.exr" ] || fail "the EXR render wrote nothing"
    RT_EXR_MODULE=$tmp/nosuch.so "$render" --quiet -r 32 24 -o "$tmp/b.png" "$scene" ||
        fail "a PNG render needed the OpenEXR module"
    missing() { # module expected-message
        out=$(RT_EXR_MODULE=$1 "$render" --quiet -r 32 24 -o "$tmp/b.exr" "$scene" 2>&1)
        rc=$?
        [ "$rc" = 1 ] || fail "module $1: exit $rc, expected 1 ($out)"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "module $1: not one line: $out"
        [[ $out == *"OpenEXR support did not load: "*"$2"* ]] || fail "module $1: '$out'"
        [ ! -e "$tmp/b.exr" ] || fail "module $1: wrote an image"
    }
    missing "$tmp/nosuch.so" "cannot open shared object file"
    libz=$(ldd "$render" | awk '$1 ~ /^libz\.so/ { print $3 }')
    [ -n "$libz" ] || fail "render does not link zlib: pick another library"
    missing "$libz" "not this build's OpenEXR module"
    ;;
tiff_module)
    # libtiff is loaded on first use too (texture/tiff_module.h): a PNG
    # render of PNG textures maps neither it nor OpenEXR, a .tx texture
    # maps it. A TIFF module that cannot load is that texture's error, said
    # once as an unreadable texture's is, and the render finishes; maketx
    # cannot write a .tx without it and says so in one line, leaving nothing.
    maketx=$testdata
    maps() { LD_DEBUG=files "${@:2}" 2>&1 >/dev/null | grep -c "file=$1"; }
    n=$(maps 'libOpenEXR\|file=libtiff' "$render" --quiet -r 32 24 -o "$tmp/a.png" "$scene")
    [ "$n" = 0 ] || fail "a PNG render of PNG textures mapped OpenEXR or libtiff ($n times)"
    [ -s "$tmp/a.png" ] || fail "the PNG render wrote nothing"
    "$texgen" --count 1 --size 64 --seed 5 "$tmp/tx" >/dev/null || fail texgen
    "$maketx" "$tmp/tx/tex00.png" 2>/dev/null || fail "maketx: exit $?"
    sed "s|tex/tex00.png|tx/tex00.tx|" "$tmp/scene.mtl" >"$tmp/scene_tx.mtl"
    sed "s|mtllib scene.mtl|mtllib scene_tx.mtl|" "$scene" >"$tmp/scene_tx.obj"
    n=$(maps libtiff "$render" --quiet -r 32 24 -o "$tmp/tx.png" "$tmp/scene_tx.obj")
    [ "$n" -ge 1 ] || fail "a render of a .tx texture did not map libtiff"
    for open in upfront lazy; do
        rm -f "$tmp/b.png"
        err=$(RT_TIFF_MODULE=/nonexistent "$render" -t 2 -r 32 24 --open-textures $open \
            --stats-json "$tmp/b.json" -o "$tmp/b.png" "$tmp/scene_tx.obj" 2>&1 >/dev/null) ||
            fail "$open: no TIFF module: exit $?"
        said=$(grep 'tex00\.tx' <<<"$err")
        [ "$(wc -l <<<"$said")" = 1 ] || fail "$open: the .tx error said $(wc -l <<<"$said") times: $err"
        [[ $said == *"tx/tex00.tx: TIFF support did not load: /nonexistent: cannot open shared object file"* ]] ||
            fail "$open: '$said'"
        [ "$(json file_errors "$tmp/b.json")" = 2 ] || fail "$open: file errors other than nosuch.png and tex00.tx"
        [ -s "$tmp/b.png" ] || fail "$open: no image written"
    done
    maketx_fails() { # module expected-message
        out=$(RT_TIFF_MODULE=$1 "$maketx" -o "$tmp/m.tx" "$tmp/tx/tex00.png" 2>&1)
        rc=$?
        [ "$rc" = 1 ] || fail "maketx, module $1: exit $rc, expected 1 ($out)"
        [ "$(wc -l <<<"$out")" = 1 ] || fail "maketx, module $1: not one line: $out"
        [[ $out == "maketx: $tmp/m.tx: TIFF support did not load: "*"$2"* ]] ||
            fail "maketx, module $1: '$out'"
        left=$(find "$tmp" -maxdepth 1 -name 'm.*')
        [ -z "$left" ] || fail "maketx, module $1: left $left"
    }
    maketx_fails /nonexistent "cannot open shared object file"
    libz=$(ldd "$render" | awk '$1 ~ /^libz\.so/ { print $3 }')
    [ -n "$libz" ] || fail "render does not link zlib: pick another library"
    maketx_fails "$libz" "not this build's TIFF module"
    RT_TIFF_MODULE=/nonexistent "$maketx" -o "$tmp/m.exr" "$tmp/tx/tex00.png" 2>/dev/null ||
        fail "maketx to EXR needed the TIFF module"
    ;;
status)
    # On a terminal, what the run is doing before its first tile (loading the
    # scene, building the BVH) is one line, replaced by the progress bar;
    # a failed load's error starts a clean line. Off a terminal, or with
    # --quiet, none of it. script(1) (util-linux) gives the run a terminal.
    command -v script >/dev/null || { echo "skipped: no script(1)"; exit 77; }
    on_tty() { script -qec "$(printf '%q ' "$render" "$@")" /dev/null | tr '\r' '\n'; }
    out=$(on_tty -t 2 -r 32 24 -o "$tmp/s.png" "$scene")
    [[ $out == *"render: loading $scene ..."* ]] || fail "no loading line: $out"
    [[ $out == *"render: building the BVH ..."* ]] || fail "no BVH line: $out"
    [[ $out == *"100%"* ]] || fail "no progress bar: $out"
    grep -qx 'render: wrote .*' <<<"$out" || fail "the last line is not clean: $out"
    out=$(on_tty -o "$tmp/s.png" "$tmp/nosuch.obj")
    grep -qx $'\e\[Krender: .*nosuch.obj: cannot open.*' <<<"$out" ||
        fail "the error does not start a clean line: $out"
    out=$(on_tty --quiet -t 2 -r 32 24 -o "$tmp/s.png" "$scene")
    [[ $out != *loading* && $out != *BVH* ]] || fail "--quiet showed a status: $out"
    out=$("$render" -t 2 -r 32 24 -o "$tmp/s.png" "$scene" 2>&1)
    [[ $out != *loading* && $out != *BVH* && $out != *$'\r'* ]] ||
        fail "a status off a terminal: $out"
    ;;
reference)
    # Reference images (tests/render/ref, 96x72, 2 spp) of the generated
    # scenes; $5 is the folder they were generated into. A little slack for
    # 8-bit rounding and Embree's per-CPU code paths.
    scenes=$testdata ref=$(dirname "$0")/ref
    for png in "$ref"/*.png; do
        base=$(basename "$png" .png) scene=${base%-*} integrator=${base##*-}
        "$render" --quiet -t 2 -r 96 72 --spp 2 --integrator "$integrator" -o "$tmp/$base.png" \
            "$scenes/$scene/$scene.gltf" 2>/dev/null || fail "$base: exit $?"
        "$imgdiff" --tolerance 0.02 --max-fail 35 "$png" "$tmp/$base.png" ||
            fail "$base differs from its reference"
    done
    ;;
testdata)
    # Scenes written by others, each against its reference image
    # (tests/render/ref-testdata, 64x48 eyelight, which reads base-colour
    # textures; a little slack for 8-bit rounding and Embree's per-CPU code
    # paths), and -t 1's image is -t 3's. A deliberate change of what a
    # scene looks like (its automatic camera, say): RT_UPDATE_REFS=1 writes
    # the references anew; look at them before committing.
    [ -d "$testdata" ] || { echo "skipped: no test data at '$testdata'"; exit 77; }
    ref=$(dirname "$0")/ref-testdata
    n=0
    for s in "$testdata"/scene-*/*.gltf "$testdata"/scene-*/*.glb "$testdata"/scene-*/*.obj; do
        [ -f "$s" ] || continue
        name=$(basename "$(dirname "$s")")
        opts=(--quiet -r 64 48 --integrator eyelight)
        "$render" "${opts[@]}" -t 1 -o "$tmp/$name.png" "$s" 2>/dev/null || fail "$s: exit $?"
        "$render" "${opts[@]}" -t 3 -o "$tmp/$name-t3.png" "$s" 2>/dev/null || fail "$s -t 3: exit $?"
        "$imgdiff" --tolerance 0 "$tmp/$name.png" "$tmp/$name-t3.png" >/dev/null ||
            fail "$name: -t 3's image is not -t 1's"
        if [ -n "${RT_UPDATE_REFS:-}" ]; then
            cp "$tmp/$name.png" "$ref/$name.png"
            updated=1
        else
            [ -f "$ref/$name.png" ] || fail "$name: no reference $ref/$name.png"
            "$imgdiff" --tolerance 0.02 --max-fail 10 "$ref/$name.png" "$tmp/$name.png" ||
                fail "$name differs from its reference $ref/$name.png"
        fi
        n=$((n + 1))
    done
    [ "$n" -ge 5 ] || fail "only $n scenes found"
    # The fox's texture is embedded in its .glb: it must be found, not filled.
    "$render" --quiet -t 2 -r 64 48 --stats-json "$tmp/fox.json" -o "$tmp/fox.exr" \
        "$testdata/scene-fox-glb/Fox.glb" 2>/dev/null || fail "Fox.glb"
    [ "$(json files_opened "$tmp/fox.json")" -ge 1 ] && [ "$(json file_errors "$tmp/fox.json")" = 0 ] ||
        fail "the embedded texture of Fox.glb did not load"
    if [ -n "${updated:-}" ]; then # written, not checked: not a pass
        echo "skipped: RT_UPDATE_REFS wrote $n references into $ref; look at them, then run again"
        exit 77
    fi
    ;;
outputs)
    # An output that is a symbolic link is written through to where it
    # leads (the link stays); a FIFO or a character device is written
    # directly; a regular file is still replaced whole. The links to devices
    # and to the process's stdout are the test's own, so that a writer that
    # replaced what it was named would replace them, never /dev's.
    o=(-t 2 -r 32 24 --spp 2 --quiet)
    "$render" "${o[@]}" -o "$tmp/ref.exr" "$scene" 2>/dev/null || fail "reference: exit $?"
    "$render" "${o[@]}" -o "$tmp/ref.png" "$scene" 2>/dev/null || fail "reference png: exit $?"
    mkdir "$tmp/out" && cd "$tmp/out" || fail mkdir
    same() { "$imgdiff" --tolerance 0 "$tmp/ref.$ext" "$1" >/dev/null 2>&1; } # the image, bit for bit
    for ext in exr png; do
        printf 'old' >"real.$ext"
        ln -s "real.$ext" "link.$ext"
        "$render" "${o[@]}" -o "link.$ext" "$scene" 2>/dev/null || fail "-o link.$ext: exit $?"
        [ -L "link.$ext" ] || fail "-o link.$ext replaced the link"
        same "real.$ext" || fail "-o link.$ext did not write real.$ext"
        mkdir -p "sub$ext"
        ln -s "sub$ext/new.$ext" "dangling.$ext"
        "$render" "${o[@]}" -o "dangling.$ext" "$scene" 2>/dev/null || fail "-o dangling.$ext: exit $?"
        [ -L "dangling.$ext" ] && same "sub$ext/new.$ext" ||
            fail "-o dangling.$ext did not create where it points"
        mkfifo "fifo.$ext"
        cat "fifo.$ext" >"got.$ext" &
        reader=$!
        timeout 60 "$render" "${o[@]}" -o "fifo.$ext" "$scene" 2>/dev/null || fail "-o fifo.$ext: exit $?"
        wait $reader
        [ -p "fifo.$ext" ] && same "got.$ext" ||
            fail "-o fifo.$ext: not the image through the FIFO"
        ln -s /dev/null "null.$ext"
        "$render" "${o[@]}" -o "null.$ext" "$scene" 2>/dev/null || fail "-o null.$ext: exit $?"
        [ -L "null.$ext" ] && [ -c /dev/null ] || fail "-o null.$ext replaced the link"
    done
    # The statistics through a link to this process's stdout, a pipe.
    ln -s /proc/self/fd/1 stdout.json
    json=$("$render" "${o[@]}" --stats-json stdout.json -o x.exr "$scene" 2>/dev/null | cat) ||
        fail "--stats-json to a pipe: exit $?"
    [ "$(jq -c '[.width, .height]' <<<"$json")" = '[32,24]' ] || fail "--stats-json to a pipe: '${json:0:80}'"
    [ -L stdout.json ] || fail "--stats-json replaced the link to stdout"
    # Nothing else is written to: no temporary file left anywhere here.
    [ -z "$(find . -name '*.tmp-*')" ] || fail "left $(find . -name '*.tmp-*')"
    # A directory is refused, before the render, in one line.
    mkdir dir.exr
    err=$("$render" "${o[@]}" -o dir.exr "$scene" 2>&1) && fail "-o a directory: exit 0"
    [ "$(wc -l <<<"$err")" = 1 ] && [[ $err == "render: dir.exr: "* ]] || fail "-o a directory: '$err'"
    ;;
honest_stats)
    # What a study varies reaches the render, as --stats-json shows it from
    # the string table and the tile cache themselves, not from the options:
    # the table has the lock --ustring-lock names; the table sees every
    # intern the render counts (per lookup, bypass) and no other after the
    # load's (early-out, --intern once); the cache keeps under --max-memory-mb.
    table() { jq -r --arg k "$1" '.ustring[$k]' "$2"; } # KEY FILE: the string table's own figure
    for lock in mutex spin rwspin sharded lockfree default; do
        "$render" --quiet -t 2 -r 24 16 --ustring-lock $lock --stats-json "$tmp/l.json" \
            -o "$tmp/l.png" "$scene" 2>/dev/null || fail "--ustring-lock $lock: exit $?"
        got=$(table lock "$tmp/l.json") want=${lock/default/lockfree}
        [ "$got" = "$want" ] || fail "--ustring-lock $lock: the table's lock is '$got', want $want"
    done
    base=
    for args in "--early-out" "" "--bypass-texture" "--intern once"; do
        # shellcheck disable=SC2086
        "$render" --quiet --integrator eyelight -t 2 -r 48 32 $args --stats-json "$tmp/i.json" \
            -o "$tmp/i.png" "$scene" 2>/dev/null || fail "'$args': exit $?"
        n=$(json interns "$tmp/i.json") t=$(table lookups "$tmp/i.json")
        [ -n "$n" ] && [ -n "$t" ] || fail "'$args': no interns or table lookups: $(cat "$tmp/i.json")"
        base=${base:-$((t - n))} # early-out's: the load's interns alone
        [ "$((t - n))" = "$base" ] ||
            fail "'$args': the table saw $t interns for the render's $n plus the load's $base"
        [ "$args" = "" ] && { [ "$n" -gt 0 ] || fail "per-lookup: no interns"; }
    done
    "$texgen" --count 2 --size 1024 "$tmp/big" >/dev/null || fail texgen
    printf 'newmtl m%d\nKd 1 1 1\nmap_Kd big/tex%02d.png\n' 0 0 1 1 >"$tmp/big.mtl"
    {
        echo "mtllib big.mtl"
        printf 'v %s\n' "-1 -1 0" "0 -1 0" "0 1 0" "-1 1 0" "0 -1 0" "1 -1 0" "1 1 0" "0 1 0"
        printf 'vt %s\n' "0 0" "1 0" "1 1" "0 1"
        printf 'usemtl m0\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\nusemtl m1\nf 5/1 6/2 7/3\nf 5/1 7/3 8/4\n'
    } >"$tmp/big.obj"
    # About 2 MB of tiles (two 1024x1024 RGB textures at level 1) under a
    # 1 MiB cap: tiles evicted, and never more resident than the cap and
    # the few that each thread's lookup holds while it loads (as
    # tex_cache_stress allows).
    "$render" --quiet --integrator eyelight -t 2 -r 1024 512 --camera-pos 0,0,2 --look-at 0,0,0 \
        --max-memory-mb 1 --stats-json "$tmp/cap.json" -o "$tmp/cap.png" "$tmp/big.obj" ||
        fail "--max-memory-mb 1: exit $?"
    loaded=$(json bytes_read "$tmp/cap.json") peak=$(json peak_memory "$tmp/cap.json")
    [ "$loaded" -gt $((3 << 19)) ] || fail "only $loaded bytes of tiles read: not a test of a 1 MiB cap"
    [ "$(json tiles_evicted "$tmp/cap.json")" -gt 0 ] || fail "--max-memory-mb 1: no tile evicted"
    [ "$peak" -le $(((1 << 20) + 2 * 3 * 17000)) ] ||
        fail "--max-memory-mb 1: $peak bytes of tiles at the peak"
    ;;
decode_budget)
    # What a decode holds beyond its rows (an interlaced PNG's whole image,
    # a progressive JPEG's coefficients) is charged to --max-memory-mb with
    # the tiles, and shared by the threads (issue 31). Two 16384x16384
    # bombs of each kind at -t 4 under 256 MiB: each refused in one line,
    # once, drawn with the fill colour as a missing texture is, exit 0, and
    # the peak RSS under 256 + 256 MiB. It was 4.3 GB (two 2 GiB PNG
    # images decoding at once).
    bytes() { # N...: each number as one byte
        local b s=
        for b in "$@"; do s+=$(printf '\\x%02x' "$b"); done
        printf %b "$s"
    }
    be32() { bytes $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
    # A deflate stream by hand (RFC 1951): bits go into bytes from the
    # least significant up, Huffman codes from their most significant bit.
    acc=0 nacc=0 out=
    bits() { # VALUE COUNT
        local i
        for ((i = 0; i < $2; i++)); do
            acc=$((acc | ($1 >> i & 1) << nacc)) nacc=$((nacc + 1))
            [ $nacc = 8 ] && { out+=$(printf '\\x%02x' $acc); acc=0 nacc=0; }
        done
    }
    code() { local i; for ((i = $2 - 1; i >= 0; i--)); do bits $(($1 >> i & 1)) 1; done; }
    flush() { printf %b "$out"; out=; }
    copy258() { code 0xc5 8; code 0 5; } # length 258 (code 285), distance 1 (code 0)
    # N zero bytes as one fixed-Huffman block: a literal 0, then copies of
    # the 258 bytes before. Eight copies are 104 bits, 13 bytes: from the
    # second eight on, every 13 bytes are the same, so they are repeated.
    deflate_zeros() {
        local n=$1 k=$((($1 - 1) / 2064)) r=$((($1 - 1) % 2064)) i
        bits 1 1; bits 1 2; code 0x30 8 # the last block, fixed codes; literal 0
        if [ $k -gt 0 ]; then
            for ((i = 0; i < 8; i++)); do copy258; done
            flush
            for ((i = 0; i < 8; i++)); do copy258; done
            printf %b "$out" >"$tmp/13"; out=
            : >"$tmp/copies"
            for ((k = k - 1; k > 0; k >>= 1)); do # k - 1 more, by doubling
                [ $((k & 1)) = 1 ] && cat "$tmp/13" >>"$tmp/copies"
                cat "$tmp/13" "$tmp/13" >"$tmp/26" && mv "$tmp/26" "$tmp/13"
            done
            cat "$tmp/copies"
        fi
        for ((i = 0; i < r; i++)); do code 0x30 8; done
        code 0 7 # end of block
        [ $nacc -gt 0 ] && bits 0 $((8 - nacc))
        flush
    }
    chunk() { # TYPE FILE: a PNG chunk, its CRC the one gzip's trailer gives
        local c0 c1 c2 c3
        be32 "$(stat -c %s "$2")"
        read -r c0 c1 c2 c3 _ < <({ printf %s "$1"; cat "$2"; } | gzip -1 -n | tail -c 8 | od -An -tu1)
        { printf %s "$1"; cat "$2"; bytes "$c3" "$c2" "$c1" "$c0"; }
    }
    # An Adam7 RGBA16 PNG of W x H zeros (each side a multiple of 8): 2 GiB
    # decoded at 16384 square, 13.5 MB on disk.
    adam7_bomb() { # OUT W H
        local n=0 p x0 y0 dx dy
        for p in "0 0 8 8" "4 0 8 8" "0 4 4 8" "2 0 4 4" "0 2 2 4" "1 0 2 2" "0 1 1 2"; do
            read -r x0 y0 dx dy <<<"$p" # each pass: rows of a filter byte and its texels
            n=$((n + (1 + 8 * (($2 - x0 + dx - 1) / dx)) * (($3 - y0 + dy - 1) / dy)))
        done
        { be32 "$2"; be32 "$3"; bytes 16 6 0 0 1; } >"$tmp/ihdr"
        { bytes 0x78 0x01; deflate_zeros $n; be32 $(((n % 65521) << 16 | 1)); } >"$tmp/idat"
        : >"$tmp/iend"
        { bytes 0x89 0x50 0x4e 0x47 0x0d 0x0a 0x1a 0x0a; chunk IHDR "$tmp/ihdr"
          chunk IDAT "$tmp/idat"; chunk IEND "$tmp/iend"; } >"$1"
    }
    mkdir "$tmp/bomb"
    adam7_bomb "$tmp/bomb/b0.png" 16384 16384
    ln "$tmp/bomb/b0.png" "$tmp/bomb/b1.png"
    # 8x8 grey, progressive, 4:4:4, its SOF2 then made to say 16384x16384:
    # 1.5 GiB of coefficients for libjpeg, from 517 bytes. So short a file
    # cannot hold a first scan of so many blocks (a bit each at least), and
    # is refused as that before anything is charged (b2.jpg); padded past
    # 512 KiB with APP15 markers, it reaches the budget (b0.jpg, b1.jpg).
    base64 -d >"$tmp/bomb/b2.jpg" <<'JPEG'
/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkz
ODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2NjY2Nj
Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wgARCEAAQAADAREA
AhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAAAP/EABQBAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEA
AhADEAAAAR//xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAEFAn//xAAUEQEAAAAAAAAAAAAA
AAAAAAAA/9oACAEDAQE/AX//xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oACAECAQE/AX//xAAUEAEA
AAAAAAAAAAAAAAAAAAAA/9oACAEBAAY/An//xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAE/
IX//2gAMAwEAAgADAAAAEB//xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oACAEDAQE/EH//xAAUEQEA
AAAAAAAAAAAAAAAAAAAA/9oACAECAQE/EH//xAAUEAEAAAAAAAAAAAAAAAAAAAAA/9oACAEBAAE/
EH//2Q==
JPEG
    { head -c 2 "$tmp/bomb/b2.jpg"
      for _ in 1 2 3 4 5 6 7 8 9; do bytes 0xff 0xef 0xff 0xff; head -c 65533 /dev/zero; done
      tail -c +3 "$tmp/bomb/b2.jpg"; } >"$tmp/bomb/b0.jpg"
    ln "$tmp/bomb/b0.jpg" "$tmp/bomb/b1.jpg"
    bombs=(b0.png b1.png b0.jpg b1.jpg b2.jpg)
    quads() { # MTL NAMES...: an OBJ of a quad per texture, in a row
        local mtl=$1 i=0 f
        shift
        for f in "$@"; do printf 'newmtl m%d\nKd 1 1 1\nmap_Kd %s\n' $i "$f"; i=$((i + 1)); done >"$tmp/$mtl.mtl"
        echo "mtllib $mtl.mtl"
        for ((i = 0; i < $#; i++)); do printf 'v %s\n' "$i 0 0" "$((i + 1)) 0 0" "$((i + 1)) 1 0" "$i 1 0"; done
        printf 'vt %s\n' "0 0" "1 0" "1 1" "0 1"
        for ((i = 0; i < $#; i++)); do
            printf 'usemtl m%d\nf %d/1 %d/2 %d/3\nf %d/1 %d/3 %d/4\n' $i $((4 * i + 1)) $((4 * i + 2)) \
                $((4 * i + 3)) $((4 * i + 1)) $((4 * i + 3)) $((4 * i + 4))
        done
    }
    quads bombs "${bombs[@]/#/bomb/}" >"$tmp/bombs.obj"
    quads missing "${bombs[@]/#/bomb/no-}" >"$tmp/missing.obj"
    # shellcheck disable=SC2054 # commas inside arguments
    view=(-t 4 -r 64 16 --camera-pos 2,0.5,6 --look-at 2,0.5,0 --max-memory-mb 256)
    "$render" --quiet "${view[@]}" -o "$tmp/missing.png" "$tmp/missing.obj" 2>/dev/null ||
        fail "missing textures: exit $?"
    # 3 GiB of address space (not under a sanitizer, which reserves
    # terabytes): a build that lets the bombs through fails here, not the
    # machine.
    limit=$([ -n "$testdata" ] && echo unlimited || echo $((3 << 20)))
    for open in upfront lazy; do
        err=$( (ulimit -v "$limit" && exec "$render" "${view[@]}" --open-textures $open \
            --stats-json "$tmp/b.json" -o "$tmp/b.png" "$tmp/bombs.obj") 2>&1 >/dev/null) ||
            fail "$open: exit $?: $err"
        rss=$(($(json peak_rss "$tmp/b.json") >> 20))
        echo "$open: peak RSS $rss MiB"
        # RT_SANITIZE: the sanitizer's allocator's memory is not ours.
        [ -n "$testdata" ] || [ "$rss" -lt $((256 + 256)) ] ||
            fail "$open: peak RSS $rss MiB under --max-memory-mb 256: $err"
        for b in "${bombs[@]}"; do
            [ "${b#*.}" = png ] && want="interlaced PNG 16384x16384 needs 2048 MiB" ||
                want="progressive JPEG 16384x16384 needs 1536 MiB"
            want="bomb/$b: $want to decode, over the texture memory budget of 256 MiB (--max-memory-mb)"
            [ "$b" = b2.jpg ] && want="bomb/b2.jpg: truncated: a multi-scan JPEG of 16384x16384 \
needs at least 524288 bytes, the file has 517"
            [ "$(grep -c -F "$want" <<<"$err")" = 1 ] || fail "$open: not once '$want': $err"
        done
        "$imgdiff" --tolerance 0 "$tmp/missing.png" "$tmp/b.png" >/dev/null ||
            fail "$open: the bombs are not drawn as missing textures are"
    done
    ;;
*)
    fail "no case $case_"
    ;;
esac
echo "ok $case_"
