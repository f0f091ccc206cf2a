#!/usr/bin/env bash
# render under mpirun: an image rendered by 2 or 3 ranks is bit-identical to
# the single-process render, every tile is rendered exactly once, and a rank
# that cannot load the scene (or would render another image, or dies) ends
# the job with a message naming it and no output file.
set -u
mpirun=$1 render=$2 imgdiff=$3 scene=$4 case_=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# CI runs as root, which Open MPI refuses unless told; more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=("$mpirun" --oversubscribe)
# Small enough to be quick, with more tiles (8 x 6) than ranks have threads.
opts=(-t 2 -r 128 96 --tile 16 --spp 4 --quiet)

# PIDs of the processes whose command line starts with $1 (procps's pgrep
# is not on every machine; /proc is).
procs_with() {
    local d line
    for d in /proc/[0-9]*; do
        line=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null) || continue
        [[ $line == "$1"* ]] && echo "${d#/proc/}"
    done
}

source "$(dirname "$0")/../progress_wait.sh"

# Jobs started with & below get their own process group (job control on),
# with SIGINT as the shell found it, not ignored as a non-interactive
# shell's background jobs have it; kill -INT -- -PGID then reaches the job
# as Ctrl-C at a terminal reaches its foreground job.
set -m

# The value of a top-level key in a --stats-json file.
key() { jq -r --arg k "$2" '.[$k]' "$1"; }

case $case_ in
np2 | np3)
    n=${case_#np}
    "$render" "${opts[@]}" -o "$tmp/one.exr" "$scene" || fail "single process: exit $?"
    timeout 120 "${mpi[@]}" -np "$n" "$render" "${opts[@]}" --stats-json "$tmp/s.json" \
        -o "$tmp/many.exr" "$scene" || fail "mpirun -np $n: exit $?"
    "$imgdiff" --tolerance 0 "$tmp/one.exr" "$tmp/many.exr" ||
        fail "-np $n is not bit-identical to one process"
    # Tile accounting: one entry per rank, tiles adding up to the image's.
    tiles=$(key "$tmp/s.json" tiles)
    ranks=$(jq '.ranks | length' "$tmp/s.json")
    sum=$(jq '[.ranks[].tiles] | add // 0' "$tmp/s.json")
    [ "$ranks" = "$n" ] || fail "$ranks ranks in the statistics, want $n"
    [ "$tiles" = 48 ] || fail "$tiles tiles, want 48"
    [ "$sum" = "$tiles" ] || fail "the ranks rendered $sum tiles of $tiles"
    ;;
fail_load)
    # MPMD: rank 1 is given a scene that is not there.
    timeout 120 "${mpi[@]}" -np 1 "$render" "${opts[@]}" -o "$tmp/out.exr" "$scene" : \
        -np 1 "$render" "${opts[@]}" -o "$tmp/out.exr" "$tmp/nosuch.gltf" 2>"$tmp/err"
    rc=$?
    [ "$rc" -ne 0 ] || fail "a rank without its scene: exit 0"
    grep -q "^render: rank 1: $tmp/nosuch.gltf: cannot open: No such file or directory" \
        "$tmp/err" || fail "no message naming rank 1: $(head -n 3 "$tmp/err")"
    [ ! -e "$tmp/out.exr" ] || fail "an output was written"
    ;;
other_image)
    timeout 120 "${mpi[@]}" -np 1 "$render" "${opts[@]}" -o "$tmp/out.exr" "$scene" : \
        -np 1 "$render" "${opts[@]}" --spp 8 -o "$tmp/out.exr" "$scene" 2>"$tmp/err"
    [ $? -ne 0 ] || fail "ranks rendering different images: exit 0"
    grep -q "^render: rank 1: its options make another image than rank 0's" "$tmp/err" ||
        fail "no message naming rank 1: $(head -n 3 "$tmp/err")"
    [ ! -e "$tmp/out.exr" ] || fail "an output was written"
    ;;
rank_dies)
    # Rank 1 killed mid-render (once it has rendered a tile): mpirun ends
    # the job naming the rank and the reason; no output file appears.
    "${mpi[@]}" -np 2 "$render" -t 1 -r 640 480 --spp 64 --quiet --progress -o "$tmp/die.exr" \
        "$scene" >"$tmp/err" 2>&1 &
    job=$!
    wait_for_line "$tmp/err" '^render: rank 1: [1-9][0-9]* tiles? rendered here' 60 ||
        { kill -- -"$job"; fail "rank 1 never rendered a tile: $(cat "$tmp/err")"; }
    victim=
    for p in $(procs_with "$render -t 1 -r 640 480"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' &&
            victim=$p
    done
    [ -n "$victim" ] || { kill -- -"$job"; fail "no process of rank 1"; }
    kill -9 "$victim"
    timeout 60 tail --pid="$job" -f /dev/null
    wait "$job"
    rc=$?
    [ "$rc" -ne 0 ] || fail "a job whose rank died: exit 0"
    grep -q "rank 1 .*exited on signal 9" "$tmp/err" || fail "no message naming rank 1: $(cat "$tmp/err")"
    [ ! -e "$tmp/die.exr" ] || fail "an output was written"
    ;;
interrupt)
    # Ctrl-C to mpirun's process group once both ranks have rendered a tile
    # (mpirun passes SIGTERM to the ranks, which it keeps in groups of their
    # own): the tiles rendered on every rank are gathered into a partial
    # EXR, which one process then finishes (--resume) into the image an
    # uninterrupted render gives. The tiles are slow (128 spp), so the
    # signal comes long before the last one.
    big=(-r 320 240 --spp 128 --quiet)
    "${mpi[@]}" -np 2 "$render" -t 1 "${big[@]}" --progress -o "$tmp/int.exr" "$scene" \
        >"$tmp/err" 2>&1 &
    job=$!
    for r in 0 1; do
        wait_for_line "$tmp/err" "^render: rank $r: [1-9][0-9]* tiles? rendered here" 60 ||
            { kill -- -"$job"; fail "rank $r never rendered a tile: $(cat "$tmp/err")"; }
    done
    kill -INT -- -"$job"
    wait "$job"
    grep -qE "render: $tmp/int.exr: interrupted \(SIGTERM\) with ([2-9]|[1-7][0-9]) of 80 tiles rendered" \
        "$tmp/err" || fail "no partial image of 2 to 79 tiles: $(cat "$tmp/err")"
    [ -s "$tmp/int.partial.exr" ] && [ ! -e "$tmp/int.exr" ] ||
        fail "the partial image is not beside the output"
    "$render" -t 2 "${big[@]}" --resume -o "$tmp/int.exr" "$scene" || fail "--resume: exit $?"
    "$render" -t 2 "${big[@]}" -o "$tmp/full.exr" "$scene" || fail "uninterrupted: exit $?"
    "$imgdiff" --tolerance 0 "$tmp/full.exr" "$tmp/int.exr" ||
        fail "interrupted under mpirun and resumed is not the uninterrupted image"
    ;;
*) fail "unknown case $case_" ;;
esac
exit 0
