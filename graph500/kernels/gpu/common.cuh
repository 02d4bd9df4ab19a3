// Shared by every .cu file of this package (runtime.py puts it in front of each source).
//
// - Block-wide prefix sums (warp shuffles, then one warp over the warp totals).
// - BlockTally: per-thread counters summed over the block and added to device
//   counters with one atomicAdd per counter per block.
// - StagedQueue: a block gathers the vertices it appends to a queue in shared
//   memory and reserves their slots with one atomicAdd; warp_append does the
//   same for a warp, with ballots.
// - for_each_frontier_edge: the edge-parallel expansion of a frontier queue
//   (load-balanced search): the frontier's edges are numbered in queue order by
//   an inclusive prefix sum of the vertices' edge counts (edge_end); block b
//   takes edges [b * EXPAND_TILE, (b + 1) * EXPAND_TILE), reads the first
//   vertex of its tile and of the next (tile_first, marked by each vertex for
//   the tile starts in its edge range), stages those vertices in shared memory,
//   and maps each edge to its vertex by binary search there. Precondition:
//   every queued vertex has at least one edge in its range, so that a tile
//   spans at most EXPAND_TILE + 1 vertices.
// - stage_small_frontier: a frontier of a few thousand vertices expanded by
//   every block without a prefix-sum launch (each block stages it whole).
// - is_received: which items of an exchange's receive buffers hold requests.
// - The SSSP kernels' vertex state: one word of distance and parent (state_of);
//   labels through a degree-ordered graph's renaming table (renamed).

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define FULL_MASK 0xFFFFFFFFu
#define BLOCK_THREADS 256
#define BLOCK_WARPS (BLOCK_THREADS / 32)
#define EXPAND_ITEMS 4
#define EXPAND_TILE (BLOCK_THREADS * EXPAND_ITEMS)

template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T value) {
    const int lane = threadIdx.x & 31;
    for (int delta = 1; delta < 32; delta <<= 1) {
        const T other = __shfl_up_sync(FULL_MASK, value, delta);
        if (lane >= delta) value += other;
    }
    return value;
}

// Exclusive prefix sum of one value per thread over a block of BLOCK_THREADS;
// `total` receives the block's sum. All threads must call it.
template <typename T>
__device__ __forceinline__ T block_exclusive_scan(T value, T* total) {
    __shared__ T warp_sums[BLOCK_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const T inclusive = warp_inclusive_scan(value);
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const T sum = lane < BLOCK_WARPS ? warp_sums[lane] : T(0);
        const T scanned = warp_inclusive_scan(sum);
        if (lane < BLOCK_WARPS) warp_sums[lane] = scanned - sum;
        if (lane == BLOCK_WARPS - 1) *total = scanned;
    }
    __syncthreads();
    const T result = warp_sums[warp] + inclusive - value;
    __syncthreads();
    return result;
}

template <int COUNTERS>
struct BlockTally {
    u64 values[COUNTERS];

    __device__ BlockTally() {
        for (int k = 0; k < COUNTERS; ++k) values[k] = 0;
    }

    // Sum over the block, then one atomicAdd per nonzero counter. All threads must call it.
    __device__ void add_to(u64* counters) {
        __shared__ u64 warp_sums[BLOCK_WARPS][COUNTERS];
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        for (int k = 0; k < COUNTERS; ++k) {
            u64 value = values[k];
            for (int delta = 16; delta; delta >>= 1) value += __shfl_down_sync(FULL_MASK, value, delta);
            if (lane == 0) warp_sums[warp][k] = value;
        }
        __syncthreads();
        if (threadIdx.x < COUNTERS) {
            u64 total = 0;
            for (int w = 0; w < BLOCK_WARPS; ++w) total += warp_sums[w][threadIdx.x];
            if (total) atomicAdd(&counters[threadIdx.x], total);
        }
    }
};

// Vertices a block appends to a queue; `count` must be zeroed before a barrier that precedes push().
template <int CAPACITY>
struct StagedQueue {
    int vertices[CAPACITY];
    u32 count;
    u64 base;

    __device__ void push(int v) { vertices[atomicAdd(&count, 1u)] = v; }

    // Copy the staged vertices to queue[*queue_size ...], advance *queue_size and empty the
    // stage. All threads must call it.
    __device__ void flush(int* queue, u64* queue_size) {
        __syncthreads();
        const u32 n = count;
        if (threadIdx.x == 0 && n) base = atomicAdd(queue_size, (u64)n);
        __syncthreads();
        for (u32 j = threadIdx.x; j < n; j += BLOCK_THREADS) queue[base + j] = vertices[j];
        __syncthreads();
        if (threadIdx.x == 0) count = 0;
        __syncthreads();
    }
};

// Warp-aggregated append: the lanes with `take` write v to queue[*size ...] in lane order,
// with one atomicAdd for the warp. All lanes of the warp must call it.
__device__ __forceinline__ void warp_append(bool take, int v, int* queue, u64* size) {
    const u32 mask = __ballot_sync(FULL_MASK, take);
    if (!mask) return;
    const int lane = threadIdx.x & 31;
    u64 slot = 0;
    if (lane == 0) slot = atomicAdd(size, (u64)__popc(mask));
    slot = __shfl_sync(FULL_MASK, slot, 0) + __popc(mask & ((1u << lane) - 1));
    if (take) queue[slot] = v;
}

// Call visit(u, e) for each edge of this block's tile: u a frontier vertex, e the
// index of its edge in the CSR arrays (row_begin[u] + the edge's rank in the row).
// tile_first[t]: the queue index of the vertex holding edge t * EXPAND_TILE.
// Contains barriers: all threads of the block must call it.
template <typename Visit>
__device__ __forceinline__ void for_each_frontier_edge(const int* __restrict__ queue, const u64* __restrict__ edge_end,
                                                       const int* __restrict__ tile_first, int queue_size,
                                                       u64 total_edges, const i64* __restrict__ row_begin,
                                                       Visit visit) {
    __shared__ u64 tile_edge_start[EXPAND_TILE + 1];
    __shared__ i64 tile_row[EXPAND_TILE + 1];
    __shared__ int tile_vertex[EXPAND_TILE + 1];

    const u64 tile_begin = blockIdx.x * (u64)EXPAND_TILE;
    if (tile_begin >= total_edges) return;  // the whole block: no tile
    const u64 tile_end = min(tile_begin + EXPAND_TILE, total_edges);
    // The tile's vertices: from its first to the next tile's first (which may start
    // exactly at tile_end, then it gets no edge here), or to the end of the queue.
    const int first = tile_first[blockIdx.x];
    const int last = tile_end < total_edges ? tile_first[blockIdx.x + 1] : queue_size - 1;
    const int count = last - first + 1;
    for (int j = threadIdx.x; j < count; j += BLOCK_THREADS) {
        const int u = queue[first + j];
        tile_vertex[j] = u;
        tile_row[j] = row_begin[u];
        tile_edge_start[j] = first + j ? edge_end[first + j - 1] : 0;
    }
    __syncthreads();
    for (int item = 0; item < EXPAND_ITEMS; ++item) {
        const u64 e = tile_begin + item * BLOCK_THREADS + threadIdx.x;
        if (e >= tile_end) break;
        int low = 0, high = count - 1;  // the last j with tile_edge_start[j] <= e
        while (low < high) {
            const int middle = (low + high + 1) >> 1;
            if (tile_edge_start[middle] <= e) low = middle; else high = middle - 1;
        }
        visit(tile_vertex[low], tile_row[low] + (i64)(e - tile_edge_start[low]));
    }
}

// A small frontier, at most SMALL_FRONTIER vertices (the top-down BFS's small levels, the
// SSSP's small light steps), staged in shared memory by every block that expands it: its
// vertices, their rows' beginnings and the inclusive prefix sums of their rows' lengths
// (row u: [row_start[u], row_end[u])). Returns its edges. All threads of the block call it.
#define SMALL_ITEMS 8
#define SMALL_FRONTIER (BLOCK_THREADS * SMALL_ITEMS)

__device__ __forceinline__ u64 stage_small_frontier(const int* __restrict__ queue, int size,
                                                    const i64* __restrict__ row_start, const i64* __restrict__ row_end,
                                                    int* vertex, i64* row_begin, u64* edge_end) {
    __shared__ u64 total;
    u64 length_sums[SMALL_ITEMS], running = 0;
    for (int k = 0; k < SMALL_ITEMS; ++k) {
        const int i = threadIdx.x * SMALL_ITEMS + k;
        if (i < size) {
            const int u = queue[i];
            vertex[i] = u;
            row_begin[i] = row_start[u];
            running += (u64)(row_end[u] - row_start[u]);
        }
        length_sums[k] = running;
    }
    const u64 before = block_exclusive_scan(running, &total);
    for (int k = 0; k < SMALL_ITEMS; ++k) {
        const int i = threadIdx.x * SMALL_ITEMS + k;
        if (i < size) edge_end[i] = before + length_sums[k];
    }
    __syncthreads();
    return total;
}

// Edge e of a staged small frontier: its index in the CSR arrays, and in `index` the frontier
// vertex whose row holds it (binary search for the first i with edge_end[i] > e).
__device__ __forceinline__ i64 small_frontier_edge(u64 e, int size, const u64* edge_end, const i64* row_begin,
                                                   int* index) {
    int low = 0, high = size - 1;
    while (low < high) {
        const int middle = (low + high) >> 1;
        if (edge_end[middle] > e) high = middle; else low = middle + 1;
    }
    *index = low;
    return row_begin[low] + (i64)(e - (low ? edge_end[low - 1] : 0));
}

// Requests a rank received (requests.py's Received): num_segments segments of `stride` items,
// segment s holding its first counts[s] items (every item where counts is null). Whether item i
// is one of them.
__device__ __forceinline__ bool is_received(i64 i, i64 stride, const u64* __restrict__ counts) {
    if (counts == nullptr) return true;
    const i64 segment = i / stride;
    return (u64)(i - segment * stride) < counts[segment];
}

// SSSP: a vertex's state is one 64-bit word, float32 distance bits << 32 | parent. Non-negative
// float bit patterns order like the values, so atomicMin on the word lowers the distance and
// sets the parent together. Unreached: +inf, parent -1 (UNREACHED).
#define UNREACHED 0x7F800000FFFFFFFFull

__device__ __forceinline__ float distance_of(u64 state) { return __uint_as_float((u32)(state >> 32)); }

__device__ __forceinline__ u64 state_of(float distance, int parent) {
    return ((u64)__float_as_uint(distance) << 32) | (u32)parent;
}

// A label under a graph's labelling: new_label[x], or x itself when new_label is null (a graph
// under its input labels).
template <typename Label>
__device__ __forceinline__ i64 renamed(const int* __restrict__ new_label, Label x) {
    return new_label != nullptr ? (i64)new_label[x] : (i64)x;
}
