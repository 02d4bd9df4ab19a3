// Inclusive prefix sums of per-item counts into u64 (see frontier.py), in three steps:
// each block scans a tile of SCAN_TILE items and writes the tile's total; one block
// scans the tile totals; every item past the first tile adds its predecessors' total.

#define SCAN_ITEMS 8
#define SCAN_TILE (BLOCK_THREADS * SCAN_ITEMS)

// Scan this block's tile of count(i), i < size, into sums; its total into tile_totals.
template <typename Count>
__device__ __forceinline__ void scan_tile(Count count, int size, u64* __restrict__ sums,
                                          u64* __restrict__ tile_totals) {
    const i64 first = blockIdx.x * (i64)SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    u64 items[SCAN_ITEMS];
    u64 running = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) {
        running += first + k < size ? count((int)(first + k)) : 0;
        items[k] = running;
    }
    __shared__ u64 tile_total;
    const u64 before = block_exclusive_scan(running, &tile_total);
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k)
        if (first + k < size) sums[first + k] = before + items[k];
    if (threadIdx.x == 0) tile_totals[blockIdx.x] = tile_total;
}

// Counts: the edges of each queued vertex, row_end[v] - row_begin[v].
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
scan_frontier_tiles(const int* __restrict__ queue, int size, const i64* __restrict__ row_begin,
                    const i64* __restrict__ row_end, u64* __restrict__ sums, u64* __restrict__ tile_totals) {
    scan_tile([&](int i) { const int v = queue[i]; return (u64)(row_end[v] - row_begin[v]); }, size, sums,
              tile_totals);
}

// Counts: the set bits of each bitmap word.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
scan_bitmap_tiles(const u32* __restrict__ bitmap, int size, u64* __restrict__ sums, u64* __restrict__ tile_totals) {
    scan_tile([&](int i) { return (u64)__popc(bitmap[i]); }, size, sums, tile_totals);
}

// In place, one block: tile_totals becomes its inclusive prefix sums.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
scan_tile_totals(u64* __restrict__ tile_totals, int num_tiles) {
    const int per_thread = (num_tiles + BLOCK_THREADS - 1) / BLOCK_THREADS;
    const int begin = min(num_tiles, threadIdx.x * per_thread), end = min(num_tiles, begin + per_thread);
    u64 sum = 0;
    for (int i = begin; i < end; ++i) sum += tile_totals[i];
    __shared__ u64 total;
    u64 running = block_exclusive_scan(sum, &total);
    for (int i = begin; i < end; ++i) {
        running += tile_totals[i];
        tile_totals[i] = running;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
add_tile_offsets(u64* __restrict__ sums, int size, const u64* __restrict__ tile_totals) {
    const i64 i = SCAN_TILE + blockIdx.x * (i64)BLOCK_THREADS + threadIdx.x;
    if (i < size) sums[i] += tile_totals[i / SCAN_TILE - 1];
}

// For an edge-parallel expansion: tile_first[t] = the index i of the vertex whose edges
// (sums[i - 1], sums[i]] in edge numbering hold edge t * EXPAND_TILE. Each tile start
// lies in exactly one vertex's range, so each entry is written once.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
mark_tile_starts(const u64* __restrict__ sums, int size, int* __restrict__ tile_first) {
    const int i = blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= size) return;
    const u64 begin = i ? sums[i - 1] : 0, end = sums[i];
    for (u64 t = (begin + EXPAND_TILE - 1) / EXPAND_TILE; t * EXPAND_TILE < end; ++t) tile_first[t] = i;
}
