#!/bin/sh
# Build the Graph500 reference program's MPI BFS+SSSP binary (graph500_reference_bfs_sssp).
#
#   benchmarks/build_reference.sh SOURCE [BUILD_DIR] [--check]
#
# SOURCE is a checkout of the reference code (github.com/graph500/graph500, tag
# graph500-3.0.0: the folder holding src/, aml/ and generator/). This script
# fetches nothing. It copies those three folders into BUILD_DIR (default: a new
# temporary folder), builds there with the `mpicc` on PATH and prints the
# binary's path as its last line of stdout. SOURCE itself is not written to.
#
# The reference defines the globals `column` and `weights` in two files each,
# which GCC 10 and later (default -fno-common) refuse to link; it is built with
# `-fcommon`, its Makefile's flags otherwise unchanged (-O3, MPI generator,
# CSR reused for validation). Works with MPICH's and Open MPI's mpicc (tested
# with MPICH 4 / Hydra 5; Debian's Open MPI 4.1.6 wraps the same gcc).
#
# --check runs the binary once at SCALE 10 on 2 ranks and fails if its report
# has no `bfs  harmonic_mean_TEPS` line. Under Open MPI as root it sets
# OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 and
# OMPI_MCA_rmaps_base_oversubscribe=1 for that run (for your own runs pass
# `--allow-run-as-root --oversubscribe` to mpiexec or export the same).
#
# The binary's usage: mpiexec -n P graph500_reference_bfs_sssp SCALE [EDGEFACTOR]
# (seeds 2 and 3 and 64 search keys are fixed in its main.c; P must be a power
# of two; SKIP_VALIDATION=1 and SKIP_BFS=1 in the environment skip those parts).
set -eu

usage() { echo "usage: $0 SOURCE [BUILD_DIR] [--check]" >&2; exit 2; }

check=0
source_dir=""
build_dir=""
for arg in "$@"; do
    case "$arg" in
        --check) check=1 ;;
        -h|--help) usage ;;
        -*) echo "$0: unknown option $arg" >&2; usage ;;
        *)
            if [ -z "$source_dir" ]; then source_dir=$arg
            elif [ -z "$build_dir" ]; then build_dir=$arg
            else usage
            fi ;;
    esac
done
[ -n "$source_dir" ] || usage

for part in src/main.c src/Makefile aml/aml.c generator/make_graph.c; do
    if [ ! -f "$source_dir/$part" ]; then
        echo "$0: $source_dir/$part is missing: SOURCE must be the reference checkout's top folder" >&2
        exit 1
    fi
done
command -v mpicc >/dev/null 2>&1 || { echo "$0: no mpicc on PATH" >&2; exit 1; }

if [ -z "$build_dir" ]; then
    build_dir=$(mktemp -d "${TMPDIR:-/tmp}/graph500-reference.XXXXXX")
fi
mkdir -p "$build_dir"
for part in src aml generator; do
    rm -rf "${build_dir:?}/$part"
    cp -R "$source_dir/$part" "$build_dir/$part"
done
rm -f "$build_dir/src/graph500_reference_bfs_sssp"

echo "building in $build_dir/src with $(command -v mpicc)" >&2
make -C "$build_dir/src" MPICC="mpicc -fcommon" graph500_reference_bfs_sssp >"$build_dir/build.log" 2>&1 || {
    echo "$0: make failed; the last lines of $build_dir/build.log:" >&2
    tail -n 20 "$build_dir/build.log" >&2
    exit 1
}
binary=$(cd "$build_dir/src" && pwd)/graph500_reference_bfs_sssp

if [ "$check" = 1 ]; then
    if mpiexec --version 2>&1 | grep -qi "open mpi\|open-mpi\|openrte"; then
        if [ "$(id -u)" = 0 ]; then
            export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        fi
        export OMPI_MCA_rmaps_base_oversubscribe=1
    fi
    if mpiexec -n 2 "$binary" 10 >"$build_dir/check.log" 2>&1 &&
            grep -q "^bfs  harmonic_mean_TEPS" "$build_dir/check.log"; then
        grep "harmonic_mean_TEPS" "$build_dir/check.log" >&2
    else
        echo "$0: the check run (mpiexec -n 2 $binary 10) failed; see $build_dir/check.log" >&2
        exit 1
    fi
fi
echo "$binary"
