// Kernel 3 on several GPUs: the kernels of the distributed delta-stepping (see sssp_distributed.py).
//
// A rank's vertices are local (0 .. its block's size), neighbours global. state: one word per
// owned vertex (common.cuh's state_of, parents global); staging: one word per vertex of the
// whole graph, the least candidate this rank made for it since its last exchange (UNSENT when
// none); touched: the bitmap of the staging words set since then.

#define FRONTIER_SIZE 0   // vertices of the next frontier
#define FRONTIER_EDGES 1  // their edges
#define BEYOND 2          // 0xFFFFFFFF - the least distance bits at or past a bound (max; 0: none)
#define UNSENT 0xFFFFFFFFFFFFFFFFull

// Relax every edge of the rank's frontier: the candidate (distance, parent) of each neighbour
// goes to its staging word when it is less (an atomic min), and a new one marks it touched.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
relax_to_staging(const int* __restrict__ queue, const u64* __restrict__ edge_end, const int* __restrict__ tile_first,
                 int queue_size, u64 total_edges, const i64* __restrict__ offsets, const int* __restrict__ neighbors,
                 const float* __restrict__ weights, const u64* __restrict__ state, int first_vertex,
                 u64* __restrict__ staging, u32* __restrict__ touched) {
    for_each_frontier_edge(queue, edge_end, tile_first, queue_size, total_edges, offsets, [&](int u, i64 e) {
        const int v = neighbors[e];
        const u64 candidate = state_of(distance_of(state[u]) + weights[e], first_vertex + u);
        if (candidate >= staging[v]) return;
        if (atomicMin(&staging[v], candidate) == UNSENT) atomicOr(&touched[v >> 5], 1u << (v & 31));
    });
}

// The touched vertices (a queue, in label order) as requests: their staging words, which go
// back to UNSENT.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
take_requests(const int* __restrict__ vertices, int count, u64* __restrict__ staging, u64* __restrict__ requests) {
    const int i = blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= count) return;
    const int v = vertices[i];
    requests[i] = staging[v];
    staging[v] = UNSENT;
}

// The owner applies the requests it received: a request of a shorter distance (strictly: a
// tie that only changed the parent could make a cycle through zero weights, or re-parent the
// root) lowers the vertex's state; one that lands below `high` puts the vertex in the next
// frontier (once: stamp holds the iteration that queued it last).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
apply_requests(const int* __restrict__ vertices, const u64* __restrict__ requests, int count, int first_vertex,
               float high, int iteration, const i64* __restrict__ offsets, u64* __restrict__ state,
               int* __restrict__ stamp, int* __restrict__ next_queue, u64* __restrict__ counters) {
    BlockTally<FRONTIER_EDGES + 1> tally;
    const int stride = gridDim.x * BLOCK_THREADS;
    for (int base = blockIdx.x * BLOCK_THREADS; base < count; base += stride) {
        const int i = base + threadIdx.x;
        bool take = false;
        int u = 0;
        if (i < count) {
            u = vertices[i] - first_vertex;
            const u64 request = requests[i];
            take = distance_of(request) < distance_of(state[u]) && request < atomicMin(&state[u], request)
                   && distance_of(request) < high && atomicExch(&stamp[u], iteration) != iteration;
            if (take) tally.values[FRONTIER_EDGES] += offsets[u + 1] - offsets[u];
        }
        warp_append(take, u, next_queue, &counters[FRONTIER_SIZE]);
    }
    tally.add_to(counters);
}

// A bucket's first frontier: the owned vertices at a distance in [low, high), and the least
// finite distance at or past high (low == high: that least alone).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
bucket_frontier(int num_local, const u64* __restrict__ state, float low, float high,
                const i64* __restrict__ offsets, int* __restrict__ queue, u64* __restrict__ counters) {
    BlockTally<FRONTIER_EDGES + 1> tally;
    u32 least = 0xFFFFFFFFu;  // distance bits
    const int stride = gridDim.x * BLOCK_THREADS;
    for (int base = blockIdx.x * BLOCK_THREADS; base < num_local; base += stride) {
        const int u = base + threadIdx.x;
        bool take = false;
        if (u < num_local) {
            const float distance = distance_of(state[u]);
            take = distance >= low && distance < high;
            if (take) tally.values[FRONTIER_EDGES] += offsets[u + 1] - offsets[u];
            if (distance >= high && distance != __int_as_float(0x7F800000)) least = min(least, __float_as_uint(distance));
        }
        warp_append(take, u, queue, &counters[FRONTIER_SIZE]);
    }
    tally.add_to(counters);
    for (int step = 16; step; step >>= 1) least = min(least, __shfl_xor_sync(FULL_MASK, least, step));
    if ((threadIdx.x & 31) == 0) atomicMax(&counters[BEYOND], (u64)(0xFFFFFFFFu - least));
}
