// Kernel 3 on the GPU: the kernels of delta-stepping SSSP (see sssp.py for the algorithm).
// A vertex's state is one 64-bit word (common.cuh's state_of).

#define THREADS BLOCK_THREADS
#define WARPS BLOCK_WARPS
#define COLLECT_STAGE (4 * THREADS)
#define PULL_WARP_ROW 32  // longer rows are pulled by a whole warp

#define FRONTIER_SIZE 0   // vertices of the next light frontier
#define FRONTIER_EDGES 1  // their frontier edges
#define MEMBERS_SIZE 2    // vertices of this bucket so far (with edges)
#define MEMBERS_EDGES 3   // their edges
#define BEYOND 4          // 0xFFFFFFFF - the least distance bits at or past the bucket's end (0: none)

// atomicMin without a result: a fire-and-forget reduction (the compiler merges an atomicMin
// whose result goes unused with one whose result is used, keeping the slower round trip).
__device__ __forceinline__ void reduce_min(u64* address, u64 value) {
    asm volatile("red.global.min.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

// Construction: light_end[v] = where the heavy edges (weight > delta) of row v begin, by
// binary search in the row (sorted by weight). One thread per row.
extern "C" __global__ void __launch_bounds__(THREADS)
find_light_ends(i64 num_vertices, const i64* __restrict__ offsets, const float* __restrict__ weights, float delta,
                i64* __restrict__ light_end) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS) {
        i64 low = offsets[v], high = offsets[v + 1];
        while (low < high) {
            const i64 middle = low + (high - low) / 2;
            if (weights[middle] <= delta) low = middle + 1; else high = middle;
        }
        light_end[v] = low;
    }
}

// Start a search from root (under the graph's labels: `graph.RootLabels` renames an input's key).
// The states are those of the vertices [first_vertex, first_vertex + num_local) (all of them on
// one GPU; a rank's block on several), under local indices. Only the states [0, filled_vertices)
// are written: a degree-ordered graph's vertices without edges, [filled_vertices, N), are never
// reached, so no step reads them; the root's state is written wherever it is.
extern "C" __global__ void __launch_bounds__(THREADS)
start_search(int root, i64 first_vertex, i64 num_local, i64 filled_vertices, u64* __restrict__ state) {
    const i64 local_root = root - first_vertex;
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < filled_vertices; v += (i64)gridDim.x * THREADS)
        state[v] = v == local_root ? state_of(0.0f, root) : UNREACHED;
    if (blockIdx.x == 0 && threadIdx.x == 0 && local_root >= filled_vertices && local_root < num_local)
        state[local_root] = state_of(0.0f, root);
}

// Start of a bucket [low, high): its vertices with frontier edges ([offsets[v],
// frontier_end[v]): the light ones, or all in the tail) form the frontier, those with
// any edge the members; all are stamped members of `bucket`. BEYOND = the least distance
// at or past `high`. A block stages its vertices in shared memory and appends them with one
// atomicAdd per COLLECT_STAGE.
extern "C" __global__ void __launch_bounds__(THREADS)
collect_bucket(i64 num_vertices, const u64* __restrict__ state, float low, float high, int bucket,
               const i64* __restrict__ offsets, const i64* __restrict__ frontier_end, int* __restrict__ queue,
               int* __restrict__ members, int* __restrict__ member_stamp, u64* __restrict__ counters) {
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
        if (d >= high && d != infinity) beyond = max(beyond, (u64)(FULL_MASK - __float_as_uint(d)));
        if (d >= low && d < high) {
            const i64 light = frontier_end[v] - offsets[v], edges = offsets[v + 1] - offsets[v];
            member_stamp[v] = bucket;
            if (light) frontier.push((int)v);
            if (edges) joined.push((int)v);
            tally.values[FRONTIER_EDGES] += light;
            tally.values[MEMBERS_EDGES] += edges;
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

// A candidate word for local vertex v that the light phase (heavy == 0) or the heavy phase
// (heavy phase: its candidates land past the bucket, so they join nothing) offers: it lowers
// v's state when its distance is less; then, in the light phase, v joins the next frontier if
// it has frontier edges ([offsets[v], frontier_end[v]); once per iteration: frontier_stamp)
// and the bucket's members if it has edges (once per bucket: member_stamp).
template <int CAPACITY>
__device__ __forceinline__ void offer(int v, u64 candidate, int heavy, int iteration, int bucket,
                                      const i64* __restrict__ offsets, const i64* __restrict__ frontier_end,
                                      u64* __restrict__ state, int* __restrict__ frontier_stamp,
                                      int* __restrict__ member_stamp, StagedQueue<CAPACITY>& next,
                                      StagedQueue<CAPACITY>& joined, BlockTally<MEMBERS_EDGES + 1>& tally) {
    const float distance = distance_of(candidate);
    if (!(distance < distance_of(__ldcg(&state[v])))) return;
    if (heavy) {
        reduce_min(&state[v], candidate);
        return;
    }
    const u64 previous = atomicMin(&state[v], candidate);
    if (!(distance < distance_of(previous))) return;
    const i64 light = frontier_end[v] - offsets[v], edges = offsets[v + 1] - offsets[v];
    if (light && atomicExch(&frontier_stamp[v], iteration) != iteration) {
        next.push(v);
        tally.values[FRONTIER_EDGES] += light;
    }
    if (edges && atomicExch(&member_stamp[v], bucket) != bucket) {
        joined.push(v);
        tally.values[MEMBERS_EDGES] += edges;
    }
}

// Relax edge e of local vertex u in one phase of the bucket [low, high): the light phase
// (heavy == 0) an edge whose candidate lands below `high` (a light edge whose candidate lands
// past the bucket waits for the heavy phase), the heavy phase a heavy edge (weight > delta) or
// a light one that the light phase left. Vertices and rows are those of [first_vertex,
// first_vertex + num_local), under local indices (parents global); on several GPUs a candidate
// for another rank's vertex v goes to staging[v] when less (an atomic min; one word per vertex
// of the graph, which keeps the least candidate sent in the search, so that none is sent
// twice) and marks v in touched, for requests.py to send to its owner.
template <int CAPACITY>
__device__ __forceinline__ void relax_edge(int u, i64 e, const int* __restrict__ neighbors,
                                           const float* __restrict__ weights, float delta, float high, int heavy,
                                           int iteration, int bucket, const i64* __restrict__ offsets,
                                           const i64* __restrict__ frontier_end, u64* __restrict__ state,
                                           int* __restrict__ frontier_stamp, int* __restrict__ member_stamp,
                                           i64 first_vertex, i64 num_local, u64* __restrict__ staging,
                                           u32* __restrict__ touched, StagedQueue<CAPACITY>& next,
                                           StagedQueue<CAPACITY>& joined, BlockTally<MEMBERS_EDGES + 1>& tally) {
    const float w = weights[e];
    const float candidate = distance_of(__ldcg(&state[u])) + w;
    if (heavy ? w <= delta && candidate < high : !(candidate < high)) return;  // the other phase's edge
    const int v = neighbors[e];
    const u64 word = state_of(candidate, (int)(first_vertex + u));
    const i64 local = v - first_vertex;
    if (local >= 0 && local < num_local) {
        offer((int)local, word, heavy, iteration, bucket, offsets, frontier_end, state, frontier_stamp, member_stamp,
              next, joined, tally);
    } else if (word < staging[v] && word < atomicMin(&staging[v], word)) {
        atomicOr(&touched[v >> 5], 1u << (v & 31));
    }
}

// Relax the edges [row_begin[u], ...) of the queue's vertices (edge-parallel, relax_edge).
extern "C" __global__ void __launch_bounds__(THREADS)
relax_edges(const int* __restrict__ queue, const u64* __restrict__ edge_end, const int* __restrict__ tile_first,
            int queue_size, u64 total_edges,
            const i64* __restrict__ row_begin, const int* __restrict__ neighbors, const float* __restrict__ weights,
            float delta, float high, int heavy, int iteration, int bucket, const i64* __restrict__ offsets,
            const i64* __restrict__ frontier_end, u64* __restrict__ state, int* __restrict__ frontier_stamp,
            int* __restrict__ member_stamp, int* __restrict__ next_queue, int* __restrict__ members,
            u64* __restrict__ counters, i64 first_vertex, i64 num_local, u64* __restrict__ staging,
            u32* __restrict__ touched) {
    __shared__ StagedQueue<EXPAND_TILE> next, joined;
    if (threadIdx.x == 0) next.count = joined.count = 0;
    BlockTally<MEMBERS_EDGES + 1> tally;
    for_each_frontier_edge(queue, edge_end, tile_first, queue_size, total_edges, row_begin, [&](int u, i64 e) {
        relax_edge(u, e, neighbors, weights, delta, high, heavy, iteration, bucket, offsets, frontier_end, state,
                   frontier_stamp, member_stamp, first_vertex, num_local, staging, touched, next, joined, tally);
    });
    next.flush(next_queue, &counters[FRONTIER_SIZE]);
    joined.flush(members, &counters[MEMBERS_SIZE]);
    tally.add_to(counters);
}

// The owner's side of an exchange: each received (vertex, candidate word) pair (global labels,
// requests.py's Received: `segments` segments of `segment_items`, counts[s] of them in segment
// s) is offered to the vertex as relax_edges offers its own candidates.
__device__ __forceinline__ void offer_received(const int* __restrict__ vertices, const u64* __restrict__ requests,
                                               i64 segment_items, int segments, const u64* __restrict__ counts,
                                               i64 first_vertex, int heavy, int iteration, int bucket,
                                               const i64* __restrict__ offsets, const i64* __restrict__ frontier_end,
                                               u64* __restrict__ state, int* __restrict__ frontier_stamp,
                                               int* __restrict__ member_stamp, int* __restrict__ next_queue,
                                               int* __restrict__ members, u64* __restrict__ counters) {
    __shared__ StagedQueue<THREADS> next, joined;
    if (threadIdx.x == 0) next.count = joined.count = 0;
    __syncthreads();
    BlockTally<MEMBERS_EDGES + 1> tally;
    const i64 items = segment_items * segments;
    const i64 stride = (i64)gridDim.x * THREADS;
    for (i64 base = blockIdx.x * (i64)THREADS; base < items; base += stride) {
        const i64 i = base + threadIdx.x;
        if (i < items && is_received(i, segment_items, counts))
            offer((int)(vertices[i] - first_vertex), requests[i], heavy, iteration, bucket, offsets, frontier_end,
                  state, frontier_stamp, member_stamp, next, joined, tally);
        next.flush(next_queue, &counters[FRONTIER_SIZE]);
        joined.flush(members, &counters[MEMBERS_SIZE]);
    }
    tally.add_to(counters);
}

extern "C" __global__ void __launch_bounds__(THREADS)
offer_requests(const int* __restrict__ vertices, const u64* __restrict__ requests, i64 segment_items, int segments,
               const u64* __restrict__ counts, i64 first_vertex, int heavy, int iteration, int bucket,
               const i64* __restrict__ offsets, const i64* __restrict__ frontier_end, u64* __restrict__ state,
               int* __restrict__ frontier_stamp, int* __restrict__ member_stamp, int* __restrict__ next_queue,
               int* __restrict__ members, u64* __restrict__ counters) {
    offer_received(vertices, requests, segment_items, segments, counts, first_vertex, heavy, iteration, bucket,
                   offsets, frontier_end, state, frontier_stamp, member_stamp, next_queue, members, counters);
}

// Several GPUs: light steps of a small frontier with no host step between them (sssp.py
// captures a step in a CUDA graph: small_step_decide, small_relax, the requests' blind
// exchange, small_offer_requests and an allreduce of the next frontier's size and edges into
// the step's state; launched several times a host read). `step` carries them from step to step:
#define STEP_GO 0            // this step runs
#define STEP_STOPPED 1       // a step did not run: none after it does
#define STEP_COUNT 2         // steps run since small_steps_begin
#define STEP_SIZE 3          // the rank's part of the frontier the step relaxes
#define STEP_GLOBAL_SIZE 4   // the frontier's size and edges over every rank (the allreduce's)
#define STEP_GLOBAL_EDGES 5
#define STEP_ITERATION 6     // the step's frontier stamp
#define STEP_BUCKET 7        // the bucket's stamp and end (float32 bits)
#define STEP_HIGH 8
#define STEP_RELAXED 9       // the rank's frontier edges relaxed by the steps

extern "C" __global__ void small_steps_begin(u64* __restrict__ step, u64 size, u64 edges, int iteration, int bucket,
                                             float high) {
    step[STEP_GO] = step[STEP_STOPPED] = step[STEP_COUNT] = step[STEP_SIZE] = step[STEP_RELAXED] = 0;
    step[STEP_GLOBAL_SIZE] = size;
    step[STEP_GLOBAL_EDGES] = edges;
    step[STEP_ITERATION] = (u64)iteration;
    step[STEP_BUCKET] = (u64)bucket;
    step[STEP_HIGH] = __float_as_uint(high);
}

// One thread. The step runs while the frontier is small (at most SMALL_FRONTIER vertices and
// max_edges frontier edges over every rank) and not empty: it takes the rank's frontier size
// from the counters and starts the next frontier's counts at zero (the members' go on).
extern "C" __global__ void small_step_decide(u64* __restrict__ step, u64* __restrict__ counters, u64 max_edges) {
    bool go = false;
    if (!step[STEP_STOPPED]) {
        const u64 size = step[STEP_GLOBAL_SIZE], edges = step[STEP_GLOBAL_EDGES];
        go = size && size <= SMALL_FRONTIER && edges <= max_edges;
        if (go) {
            step[STEP_COUNT] += 1;
            step[STEP_ITERATION] += 1;
            step[STEP_SIZE] = counters[FRONTIER_SIZE];
            step[STEP_RELAXED] += counters[FRONTIER_EDGES];
            counters[FRONTIER_SIZE] = counters[FRONTIER_EDGES] = 0;
        } else {
            step[STEP_STOPPED] = 1;
        }
    }
    step[STEP_GO] = go;
}

// The step's relaxation, a grid of any size: relax_edges' light phase over a frontier that
// every block stages whole (the bucket's end and stamps read from the step).
extern "C" __global__ void __launch_bounds__(THREADS)
small_relax(const u64* __restrict__ step, const int* __restrict__ queue, const i64* __restrict__ offsets,
            const i64* __restrict__ frontier_end, const int* __restrict__ neighbors, const float* __restrict__ weights,
            float delta, u64* __restrict__ state, int* __restrict__ frontier_stamp, int* __restrict__ member_stamp,
            int* __restrict__ next_queue, int* __restrict__ members, u64* __restrict__ counters, i64 first_vertex,
            i64 num_local, u64* __restrict__ staging, u32* __restrict__ touched) {
    if (!step[STEP_GO]) return;
    __shared__ u64 edge_end[SMALL_FRONTIER];
    __shared__ i64 row_begin[SMALL_FRONTIER];
    __shared__ int vertex[SMALL_FRONTIER];
    __shared__ StagedQueue<THREADS> next, joined;
    if (threadIdx.x == 0) next.count = joined.count = 0;
    const float high = __uint_as_float((u32)step[STEP_HIGH]);
    const int iteration = (int)step[STEP_ITERATION], bucket = (int)step[STEP_BUCKET], size = (int)step[STEP_SIZE];
    const u64 edges = stage_small_frontier(queue, size, offsets, frontier_end, vertex, row_begin, edge_end);
    BlockTally<MEMBERS_EDGES + 1> tally;
    const u64 stride = (u64)gridDim.x * THREADS;
    for (u64 base = blockIdx.x * (u64)THREADS; base < edges; base += stride) {
        const u64 e = base + threadIdx.x;
        if (e < edges) {
            int index;
            const i64 edge = small_frontier_edge(e, size, edge_end, row_begin, &index);
            relax_edge(vertex[index], edge, neighbors, weights, delta, high, 0, iteration, bucket, offsets,
                       frontier_end, state, frontier_stamp, member_stamp, first_vertex, num_local, staging, touched,
                       next, joined, tally);
        }
        next.flush(next_queue, &counters[FRONTIER_SIZE]);
        joined.flush(members, &counters[MEMBERS_SIZE]);
    }
    tally.add_to(counters);
}

// The owner's offers of a step's received candidates (offer_requests, the stamps read from the step).
extern "C" __global__ void __launch_bounds__(THREADS)
small_offer_requests(const u64* __restrict__ step, const int* __restrict__ vertices, const u64* __restrict__ requests,
                     i64 segment_items, int segments, const u64* __restrict__ counts, i64 first_vertex,
                     const i64* __restrict__ offsets, const i64* __restrict__ frontier_end, u64* __restrict__ state,
                     int* __restrict__ frontier_stamp, int* __restrict__ member_stamp, int* __restrict__ next_queue,
                     int* __restrict__ members, u64* __restrict__ counters) {
    if (!step[STEP_GO]) return;
    offer_received(vertices, requests, segment_items, segments, counts, first_vertex, 0, (int)step[STEP_ITERATION],
                   (int)step[STEP_BUCKET], offsets, frontier_end, state, frontier_stamp, member_stamp, next_queue,
                   members, counters);
}

// Pull candidates for a vertex at distance `bound` from a row sorted by weight: the least
// (candidate, parent) word over the row's neighbours u in the bucket, low <= d(u) < high,
// whose candidate d(u) + w beats `bound` (UNREACHED if none). Every candidate of an edge of
// weight w is at least low + w (float32 rounding is monotone), so the scan stops at the first
// edge with low + w >= the best distance so far: in increasing weight, the edges past it
// cannot do better. d(u) is distance[u * stride]: the float32 high halves of the states on one
// GPU (stride 2), every rank's distances gathered on several (stride 1). A short row is scanned
// by its own thread ...
__device__ __forceinline__ float distance_at(const float* __restrict__ distance, int stride, int u) {
    return __ldcg(&distance[(i64)u * stride]);
}

__device__ __forceinline__ u64 pull_short_row(i64 begin, i64 end, float low, float high, float bound,
                                              const int* __restrict__ neighbors, const float* __restrict__ weights,
                                              const float* __restrict__ distance, int stride) {
    u64 best = UNREACHED;
    for (i64 e = begin; e < end; ++e) {
        const float w = weights[e];
        if (!(low + w < bound)) break;
        const int u = neighbors[e];
        const float d = distance_at(distance, stride, u);
        if (d >= low && d < high && d + w < bound) {
            bound = d + w;
            best = state_of(bound, u);
        }
    }
    return best;
}

// ... a long one by the whole warp, 32 edges a round, the best candidate shared after each
// round (all lanes return it).
__device__ __forceinline__ u64 pull_long_row(i64 begin, i64 end, float low, float high, float bound,
                                             const int* __restrict__ neighbors, const float* __restrict__ weights,
                                             const float* __restrict__ distance, int stride) {
    const int lane = threadIdx.x & 31;
    const float infinity = __int_as_float(0x7F800000);
    u64 best = UNREACHED;
    for (i64 round = begin; round < end; round += 32) {
        const i64 e = round + lane;
        const float w = e < end ? weights[e] : infinity;
        if (!(low + __shfl_sync(FULL_MASK, w, 0) < bound)) break;  // lane 0 holds the round's lightest edge
        if (low + w < bound) {
            const int u = neighbors[e];
            const float d = distance_at(distance, stride, u);
            if (d >= low && d < high) best = min(best, state_of(d + w, u));
        }
        for (int delta = 16; delta; delta >>= 1) best = min(best, __shfl_xor_sync(FULL_MASK, best, delta));
        bound = fminf(bound, distance_of(best));
    }
    return best;
}

// A pull for the bucket [low, high): every vertex at or past `from` takes the least candidate
// from its neighbours in the bucket, when it lowers its distance. Neighbours below `low` need
// not be read: their buckets' heavy phases have relaxed all their edges that land past them.
// The heavy phase (from = high): the candidates land at or past `high`, so no vertex below
// `high` changes, and each is final. The tail (from = low, high = inf: one Bellman-Ford round
// in place of the push from every vertex of the tail): a vertex of the tail may change while
// others read its distance; either value is a path's length, and each vertex that changes
// joins `next_queue` (with FRONTIER_SIZE and FRONTIER_EDGES: all its edges), whose push
// carries the change on. Each vertex is written by its own thread only. A row longer than
// PULL_WARP_ROW is taken by its whole warp. The states and rows are the rank's (local), the
// neighbours' distances every vertex's.
extern "C" __global__ void __launch_bounds__(THREADS)
pull_bucket(i64 num_vertices, float from, float low, float high, const i64* __restrict__ offsets,
            const int* __restrict__ neighbors, const float* __restrict__ weights, u64* __restrict__ state,
            const float* __restrict__ distance, int stride, int* __restrict__ next_queue,
            u64* __restrict__ counters) {
    const int lane = threadIdx.x & 31;
    BlockTally<FRONTIER_EDGES + 1> tally;
    const i64 grid_stride = (i64)gridDim.x * THREADS;
    for (i64 block_base = blockIdx.x * (i64)THREADS; block_base < num_vertices; block_base += grid_stride) {
        const i64 v = block_base + threadIdx.x;
        u64 current = 0;
        i64 begin = 0, end = 0;
        if (v < num_vertices) {
            current = __ldcg(&state[v]);
            if (!(distance_of(current) < from)) {
                begin = offsets[v];
                end = offsets[v + 1];
            }
        }
        const float bound = distance_of(current);
        const bool long_row = end - begin > PULL_WARP_ROW;
        u64 best = long_row ? UNREACHED
                            : pull_short_row(begin, end, low, high, bound, neighbors, weights, distance, stride);
        for (u32 rows = __ballot_sync(FULL_MASK, long_row); rows; rows &= rows - 1) {
            const int owner = __ffs(rows) - 1;
            const u64 row_best = pull_long_row(__shfl_sync(FULL_MASK, begin, owner), __shfl_sync(FULL_MASK, end, owner),
                                               low, high, __shfl_sync(FULL_MASK, bound, owner), neighbors, weights,
                                               distance, stride);
            if (lane == owner) best = row_best;
        }
        const bool lowered = distance_of(best) < bound;
        if (lowered) state[v] = best;
        if (next_queue != nullptr) {
            warp_append(lowered, (int)v, next_queue, &counters[FRONTIER_SIZE]);
            if (lowered) tally.values[FRONTIER_EDGES] += end - begin;
        }
    }
    if (next_queue != nullptr) tally.add_to(counters);
}

// Several GPUs, before a pull: the distances of the rank's states, for every rank to gather.
extern "C" __global__ void __launch_bounds__(THREADS)
state_distances(i64 num_vertices, const u64* __restrict__ state, float* __restrict__ distance) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS)
        distance[v] = distance_of(state[v]);
}

// Several GPUs, before a heavy phase's pull from a bucket of few members: this rank's members
// (local indices, counters[MEMBERS_SIZE] of them) as (global label, state word) pairs at
// `vertices` and `words` (its segment of the requests' send buffers), their count at
// member_counts[rank], for every rank to receive in place (requests.py's allgather_segments).
extern "C" __global__ void __launch_bounds__(THREADS)
pack_members(const int* __restrict__ members, const u64* __restrict__ counters, const u64* __restrict__ state,
             i64 first_vertex, int rank, int* __restrict__ vertices, u64* __restrict__ words,
             u64* __restrict__ member_counts) {
    const i64 size = (i64)counters[MEMBERS_SIZE];
    if (blockIdx.x == 0 && threadIdx.x == 0) member_counts[rank] = (u64)size;
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < size; i += (i64)gridDim.x * THREADS) {
        const int v = members[i];
        vertices[i] = (int)(first_vertex + v);
        words[i] = state[v];
    }
}

// ... then every rank's pairs (segment s from s * segment_items, member_counts[s] of them; the
// grid's y the segment) written as distances at their vertices in the gathered distances, every
// other entry of which holds NaN (unknown: no pull takes it) or a distance of an earlier bucket.
extern "C" __global__ void __launch_bounds__(THREADS)
scatter_members(const int* __restrict__ vertices, const u64* __restrict__ words, i64 segment_items,
                const u64* __restrict__ member_counts, float* __restrict__ distance) {
    const i64 first = blockIdx.y * segment_items, count = (i64)member_counts[blockIdx.y];
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < count; i += (i64)gridDim.x * THREADS)
        distance[vertices[first + i]] = distance_of(words[first + i]);
}

// The outputs under the input's labels: for each input label v, the state of new_label[v]
// and its parent through order (new -> input label); both tables null: the same labels.
// A label at or past filled_vertices has no edges: unreached, unless it is the root (under the
// graph's labels). On several GPUs the rank's block, [first_vertex, first_vertex + num_vertices):
// states, outputs and block_label (the block's part of new_label) local, order and parents global.
extern "C" __global__ void __launch_bounds__(THREADS)
split_state(i64 num_vertices, i64 filled_vertices, int root, i64 first_vertex, const u64* __restrict__ state,
            const int* __restrict__ order, const int* __restrict__ block_label, int* __restrict__ parent,
            float* __restrict__ distance) {
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < num_vertices; v += (i64)gridDim.x * THREADS) {
        const i64 x = (block_label != nullptr ? (i64)block_label[v] : first_vertex + v) - first_vertex;
        const u64 s = x < filled_vertices ? state[x]
                                          : (x + first_vertex == root ? state_of(0.0f, (int)root) : UNREACHED);
        const int p = (int)(u32)s;
        parent[v] = p >= 0 && order != nullptr ? order[p] : p;
        distance[v] = distance_of(s);
    }
}
