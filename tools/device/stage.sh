#!/usr/bin/env bash
# stage.sh BUILD DEST: the programs tools/device/checks.sh and the bundle's
# run.sh need (render, study, the benches, the scene generators, the TIFF and
# EXR modules), copied from a build folder into DEST, laid out as one, for
# ../shared/device/bundle.sh. Bundling the whole build would carry the
# OpenImageIO benches and OpenImageIO's own libraries: over 100 MB, beyond
# what a lent machine is given (64 MiB).
#   bash tools/device/stage.sh build /tmp/devbuild && bash ../shared/device/bundle.sh /tmp/devbuild
set -eu
build=${1:?usage: stage.sh BUILD DEST} dest=${2:?usage: stage.sh BUILD DEST}
rm -rf "$dest"
mkdir -p "$dest/renderer" "$dest/tools" "$dest/lib"
cp "$build/renderer/render" "$dest/renderer/"
for p in study ustring-bench texture-bench render-bench scenegen objgen texgen maketx; do
    cp "$build/tools/$p" "$dest/tools/"
done
cp "$build"/lib/librt_*.so "$dest/lib/" 2>/dev/null || true # absent with RT_LAZY_MODULES off
echo "stage: $(find "$dest" -type f | wc -l) files in $dest"
