// Kernel 3 on the GPU: the kernels of delta-stepping SSSP (see sssp.py for the algorithm).
//
// A vertex's state is one 64-bit word: float32 distance bits << 32 | parent. Non-negative
// float bit patterns order like the values, so atomicMin on the word lowers the distance
// and sets the parent together. Unreached: +inf, parent -1 (UNREACHED).

#define THREADS BLOCK_THREADS
#define WARPS BLOCK_WARPS
#define UNREACHED 0x7F800000FFFFFFFFull
#define COLLECT_STAGE (4 * THREADS)

#define FRONTIER_SIZE 0   // vertices of the next light frontier
#define FRONTIER_EDGES 1  // their light edges
#define MEMBERS_SIZE 2    // vertices settled in this bucket so far
#define MEMBERS_EDGES 3   // their heavy edges
#define BEYOND 4          // 0xFFFFFFFF - the least distance bits at or past the bucket's end (0: none)

__device__ __forceinline__ float distance_of(u64 state) { return __uint_as_float((u32)(state >> 32)); }

__device__ __forceinline__ u64 state_of(float distance, int parent) {
    return ((u64)__float_as_uint(distance) << 32) | (u32)parent;
}

// Construction: reorder each row in place so that its light edges (weight <= delta)
// come first; light_end[v] is where its heavy edges begin. One thread per row.
extern "C" __global__ void __launch_bounds__(THREADS)
split_light_heavy(i64 num_vertices, const i64* __restrict__ offsets, int* __restrict__ neighbors,
                  float* __restrict__ weights, float delta, i64* __restrict__ light_end) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS) {
        i64 low = offsets[v], high = offsets[v + 1] - 1;
        while (true) {
            while (low <= high && weights[low] <= delta) low++;
            while (low <= high && weights[high] > delta) high--;
            if (low >= high) break;
            const float w = weights[low];
            weights[low] = weights[high];
            weights[high] = w;
            const int n = neighbors[low];
            neighbors[low] = neighbors[high];
            neighbors[high] = n;
        }
        light_end[v] = low;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
start_search(int root, i64 num_vertices, u64* __restrict__ state, u32* __restrict__ settled) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS) {
        state[v] = v == root ? state_of(0.0f, root) : UNREACHED;
        if ((v & 31) == 0) settled[v >> 5] = 0;
    }
}

// Start of a bucket [low, high): its vertices with light edges form the frontier, those
// with heavy edges the members (a queue holds only vertices with edges to expand); all
// are stamped members of `bucket`. BEYOND = the least distance at or past `high`.
// The vertices below `low` are settled: their bits are set in `settled`. A block stages
// its vertices in shared memory and appends them with one atomicAdd per COLLECT_STAGE.
extern "C" __global__ void __launch_bounds__(THREADS)
collect_bucket(i64 num_vertices, const u64* __restrict__ state, float low, float high, int bucket,
               const i64* __restrict__ offsets, const i64* __restrict__ light_end, int* __restrict__ queue,
               int* __restrict__ members, int* __restrict__ member_stamp, u32* __restrict__ settled,
               u64* __restrict__ counters) {
    __shared__ StagedQueue<COLLECT_STAGE> frontier, joined;
    if (threadIdx.x == 0) frontier.count = joined.count = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const float infinity = __int_as_float(0x7F800000);
    BlockTally<BEYOND> tally;  // the counters before BEYOND
    u64 beyond = 0;
    const i64 stride = (i64)gridDim.x * THREADS;
    for (i64 block_base = blockIdx.x * (i64)THREADS; block_base < num_vertices; block_base += stride) {
        const i64 v = block_base + threadIdx.x;
        const float d = v < num_vertices ? distance_of(state[v]) : infinity;
        const u32 settled_mask = __ballot_sync(FULL_MASK, d < low);
        if (lane == 0 && v < num_vertices) settled[v >> 5] = settled_mask;
        if (d >= high && d != infinity) beyond = max(beyond, (u64)(FULL_MASK - __float_as_uint(d)));
        if (d >= low && d < high) {
            const i64 light = light_end[v] - offsets[v], heavy = offsets[v + 1] - light_end[v];
            member_stamp[v] = bucket;
            if (light) frontier.push((int)v);
            if (heavy) joined.push((int)v);
            tally.values[FRONTIER_EDGES] += light;
            tally.values[MEMBERS_EDGES] += heavy;
        }
        __syncthreads();
        if (frontier.count > COLLECT_STAGE - THREADS || joined.count > COLLECT_STAGE - THREADS) {
            frontier.flush(queue, &counters[FRONTIER_SIZE]);
            joined.flush(members, &counters[MEMBERS_SIZE]);
        }
    }
    frontier.flush(queue, &counters[FRONTIER_SIZE]);
    joined.flush(members, &counters[MEMBERS_SIZE]);
    tally.add_to(counters);
    for (int delta = 16; delta; delta >>= 1) beyond = max(beyond, __shfl_down_sync(FULL_MASK, beyond, delta));
    if (lane == 0 && beyond) atomicMax(&counters[BEYOND], beyond);
}

// Relax the edges [row_begin[u], ...) of the queue's vertices (edge-parallel). A distance
// that drops below `high` puts its vertex in the next light frontier if it has light edges
// (once per iteration: frontier_stamp) and among the bucket's members if it has heavy ones
// (once per bucket: member_stamp).
// Heavy edges never drop a distance below `high`, so the same kernel relaxes them.
// Edges to settled vertices are skipped on the bitmap (in L2), without reading their state.
extern "C" __global__ void __launch_bounds__(THREADS)
relax_edges(const int* __restrict__ queue, const u64* __restrict__ edge_end, const int* __restrict__ tile_first,
            int queue_size, u64 total_edges,
            const i64* __restrict__ row_begin, const int* __restrict__ neighbors, const float* __restrict__ weights,
            float high, int iteration, int bucket, const i64* __restrict__ offsets,
            const i64* __restrict__ light_end, const u32* __restrict__ settled, u64* __restrict__ state,
            int* __restrict__ frontier_stamp,
            int* __restrict__ member_stamp, int* __restrict__ next_queue, int* __restrict__ members,
            u64* __restrict__ counters) {
    __shared__ StagedQueue<EXPAND_TILE> next, joined;
    if (threadIdx.x == 0) next.count = joined.count = 0;
    BlockTally<BEYOND> tally;
    for_each_frontier_edge(queue, edge_end, tile_first, queue_size, total_edges, row_begin, [&](int u, i64 e) {
        const int v = neighbors[e];
        if ((settled[v >> 5] >> (v & 31)) & 1u) return;  // final: no candidate can be lower
        const float candidate = distance_of(__ldcg(&state[u])) + weights[e];
        if (!(candidate < distance_of(__ldcg(&state[v])))) return;
        const u64 previous = atomicMin(&state[v], state_of(candidate, u));
        if (!(candidate < distance_of(previous)) || !(candidate < high)) return;
        const i64 light = light_end[v] - offsets[v], heavy = offsets[v + 1] - light_end[v];
        if (light && atomicExch(&frontier_stamp[v], iteration) != iteration) {
            next.push(v);
            tally.values[FRONTIER_EDGES] += light;
        }
        if (heavy && atomicExch(&member_stamp[v], bucket) != bucket) {
            joined.push(v);
            tally.values[MEMBERS_EDGES] += heavy;
        }
    });
    next.flush(next_queue, &counters[FRONTIER_SIZE]);
    joined.flush(members, &counters[MEMBERS_SIZE]);
    tally.add_to(counters);
}

extern "C" __global__ void __launch_bounds__(THREADS)
split_state(i64 num_vertices, const u64* __restrict__ state, int* __restrict__ parent, float* __restrict__ distance) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS) {
        const u64 s = state[v];
        parent[v] = (int)(u32)s;
        distance[v] = distance_of(s);
    }
}
