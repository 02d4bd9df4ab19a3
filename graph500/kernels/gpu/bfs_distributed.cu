// Kernel 2 on several GPUs: the top-down kernels of the distributed BFS (see bfs_distributed.py);
// its bottom-up levels, and the parent search of its top-down levels, are bfs.cu's.
//
// Vertices of the rank's rows are local (0 .. its block's size), neighbours global; bitmaps
// are u32 words, bit v & 31 of word v >> 5, over all N vertices unless named "block".

// Top-down, first half: every neighbour of the rank's frontier queue that is not visited is
// marked in found (all N vertices; edge-parallel over the queue's rows).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
mark_found(const int* __restrict__ queue, const u64* __restrict__ edge_end, const int* __restrict__ tile_first,
           int queue_size, u64 total_edges, const i64* __restrict__ offsets, const int* __restrict__ neighbors,
           const u32* __restrict__ visited, u32* __restrict__ found) {
    for_each_frontier_edge(queue, edge_end, tile_first, queue_size, total_edges, offsets, [&](int u, i64 e) {
        const int v = neighbors[e];
        const u32 bit = 1u << (v & 31);
        if ((visited[v >> 5] | found[v >> 5]) & bit) return;
        atomicOr(&found[v >> 5], bit);
    });
}

// Top-down, second half: the block's vertices to search for a parent are those some rank found
// (the OR of the parts received, one block-sized part per rank) and not visited. Written as
// the bottom-up scan's "visited" input, where a set bit means "skip": visited | ~found.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
skip_unfound(const u32* __restrict__ found_parts, int num_parts, int block_words, const u32* __restrict__ visited,
             u32* __restrict__ skip) {
    const int w = blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (w >= block_words) return;
    u32 found = 0;
    for (int part = 0; part < num_parts; ++part) found |= found_parts[(i64)part * block_words + w];
    skip[w] = visited[w] | ~found;
}
