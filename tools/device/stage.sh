#!/usr/bin/env bash
# stage.sh BUILD DEST: the programs a lent many-core machine runs, copied
# from a build folder into DEST, laid out as one, for
# ../shared/device/bundle.sh: what tools/device/checks.sh runs (render,
# study, ustring-bench), what the bundle's run.sh needs (scenegen, objgen),
# the other benches a session may want there (texture-bench, render-bench,
# with texgen and maketx for their inputs), and the TIFF and EXR modules.
# Bundling the whole build would carry the OpenImageIO benches and
# OpenImageIO's own libraries: over 100 MB, beyond what a lent machine is
# given (64 MiB).
#   bash tools/device/stage.sh build /tmp/devbuild && bash ../shared/device/bundle.sh /tmp/devbuild
set -eu
build=${1:?usage: stage.sh BUILD DEST} dest=${2:?usage: stage.sh BUILD DEST}
# DEST is emptied first: only a folder this script made (or a new one).
if [ -e "$dest" ] && [ ! -e "$dest/.stage" ]; then
    echo "stage.sh: $dest exists and is not a stage folder: name a new one" >&2
    exit 1
fi
rm -rf "$dest"
mkdir -p "$dest/renderer" "$dest/tools" "$dest/lib"
touch "$dest/.stage"
cp "$build/renderer/render" "$dest/renderer/"
for p in study ustring-bench scenegen objgen texture-bench render-bench texgen maketx; do
    cp "$build/tools/$p" "$dest/tools/"
done
cp "$build"/lib/librt_*.so "$dest/lib/" 2>/dev/null || true # absent with RT_LAZY_MODULES off
echo "stage: $(find "$dest" -type f ! -name .stage | wc -l) files in $dest"
