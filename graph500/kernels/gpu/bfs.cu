// Kernel 2 on the GPU: the level kernels of the BFS (see bfs.py for the algorithm).
//
// Vertices are int (N <= 2^31); bitmaps are u32 words, bit v & 31 of word v >> 5.
// Every level kernel adds to the level's counters (one atomic per block):

#define FRONTIER_SIZE 0     // vertices discovered by the level: the next frontier
#define FRONTIER_EDGES 1    // the sum of their degrees
#define FRONTIER_HUBS 2     // those of degree >= hub_degree
#define LONG_QUEUE_SIZE 3   // bottom-up: vertices left for the warp-per-vertex pass
#define SCANNED_VERTICES 4  // bottom-up: unvisited vertices that read their neighbours
#define SCANNED_EDGES 5     // bottom-up: neighbours read
#define LEVELS_DONE 6       // top_down_small_levels: the levels it expanded
#define UNEXPLORED_EDGES 7  // top_down_small_levels: edges of the vertices never in a frontier, after its last
#define NUM_COUNTERS 8

#define THREADS BLOCK_THREADS
#define WARPS BLOCK_WARPS
#define BOTTOM_UP_PROBES 2  // neighbours a bottom-up thread loads before testing them
#define LISTED_STEPS_SAVED 2  // bottom_up_scan lists 32 words' unvisited vertices where that saves more steps

__device__ __forceinline__ bool test_bit(const u32* __restrict__ bitmap, int v) {
    return (__ldg(&bitmap[v >> 5]) >> (v & 31)) & 1u;
}

// Whether this thread claims v: sets its visited bit, which was clear (a plain read first
// skips the atomic for the vertices already visited).
__device__ __forceinline__ bool claim(u32* __restrict__ visited, int v) {
    const u32 bit = 1u << (v & 31);
    return !(visited[v >> 5] & bit) && !(atomicOr(&visited[v >> 5], bit) & bit);
}

__device__ __forceinline__ u32 degree_of(const i64* __restrict__ offsets, int v) {
    return (u32)(offsets[v + 1] - offsets[v]);
}

// Per-thread sums of one level's discoveries, added to the counters once per block.
struct LevelTally : BlockTally<NUM_COUNTERS> {
    // A vertex of the next frontier whose slot in it is already counted (top-down).
    __device__ void queued(u32 degree, u32 hub_degree) {
        values[FRONTIER_EDGES] += degree;
        values[FRONTIER_HUBS] += degree >= hub_degree;
    }

    __device__ void discovered(u32 degree, u32 hub_degree) {
        values[FRONTIER_SIZE] += 1;
        queued(degree, hub_degree);
    }
};

// Start a search from root (under the graph's labels: `graph.RootLabels` renames an input's key):
// the root its own parent, parents [0, cleared_parents) -1 but the root's, visited = the
// vertices that are never searched (no edges, or past N) plus the root, the queue = [root].
// A degree-ordered graph's search clears no parent: parents_to_input_labels reads the parent
// of a visited vertex only. The rows, parents and queue are those of the vertices
// [first_vertex, first_vertex + num_local) (all of them on one GPU; a rank's block on several),
// under local indices; visited covers every vertex. The counters hold the rank's part of the
// frontier: the root if the rank owns it, else nothing. root_plus_one: where given, the root
// is read from it (plus one: a captured start, the label summed over the ranks on the device)
// and `root_label` is not used.
extern "C" __global__ void __launch_bounds__(THREADS)
start_search(int root_label, i64 first_vertex, i64 num_local, i64 cleared_parents, int num_words,
             const u32* __restrict__ never_searched, const i64* __restrict__ offsets, u32 hub_degree,
             int* __restrict__ parent, u32* __restrict__ visited, int* __restrict__ queue, u64* __restrict__ counters,
             const u64* __restrict__ root_plus_one) {
    const int root = root_plus_one != nullptr ? (int)(*root_plus_one - 1) : root_label;
    const i64 local_root = root - first_vertex;
    const i64 stride = (i64)gridDim.x * THREADS;
    for (i64 v = blockIdx.x * (i64)THREADS + threadIdx.x; v < cleared_parents; v += stride)
        parent[v] = v == local_root ? root : -1;
    for (i64 w = blockIdx.x * (i64)THREADS + threadIdx.x; w < num_words; w += stride)
        visited[w] = never_searched[w] | (w == (root >> 5) ? 1u << (root & 31) : 0u);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int k = 0; k < NUM_COUNTERS; ++k) counters[k] = 0;
        if (local_root < 0 || local_root >= num_local) return;
        const u32 degree = degree_of(offsets, (int)local_root);
        if (local_root >= cleared_parents) parent[local_root] = root;
        queue[0] = (int)local_root;
        counters[FRONTIER_SIZE] = 1;
        counters[FRONTIER_EDGES] = degree;
        counters[FRONTIER_HUBS] = degree >= hub_degree;
    }
}

// Top-down level, edge-parallel (for_each_frontier_edge over the queue's CSR rows).
// A vertex is claimed by the atomicOr that sets its visited bit; the block stages its
// claims in shared memory and appends them to the next queue with one atomicAdd. On several
// GPUs the queue and parents are the rank's block's (local indices from first_vertex, parents
// global) and a claimed vertex of another rank's block is left to its owner: its parent goes to
// remote_parent (one word per vertex of the graph) and its bit to remote_claims (requests.py).
extern "C" __global__ void __launch_bounds__(THREADS)
top_down_expand(const int* __restrict__ queue, const u64* __restrict__ edge_end, const int* __restrict__ tile_first,
                int queue_size, u64 total_edges,
                const i64* __restrict__ offsets, const int* __restrict__ neighbors, u32 hub_degree,
                u32* __restrict__ visited, int* __restrict__ parent, int* __restrict__ next_queue,
                u64* __restrict__ counters, i64 first_vertex, i64 num_local, int* __restrict__ remote_parent,
                u32* __restrict__ remote_claims) {
    __shared__ StagedQueue<EXPAND_TILE> claimed;
    if (threadIdx.x == 0) claimed.count = 0;
    LevelTally tally;
    for_each_frontier_edge(queue, edge_end, tile_first, queue_size, total_edges, offsets, [&](int u, i64 e) {
        const int v = neighbors[e];
        if (!claim(visited, v)) return;
        const i64 local = v - first_vertex;
        if (local < 0 || local >= num_local) {
            remote_parent[v] = (int)(first_vertex + u);
            atomicOr(&remote_claims[v >> 5], 1u << (v & 31));
            return;
        }
        parent[local] = (int)(first_vertex + u);
        claimed.push((int)local);
        tally.queued(degree_of(offsets, (int)local), hub_degree);
    });
    claimed.flush(next_queue, &counters[FRONTIER_SIZE]);
    tally.add_to(counters);
}

// Several GPUs, the second half of a top-down level (bfs_distributed.py): the owner claims
// the vertices other ranks claimed for it (pairs of a global vertex of its block and a global
// parent, requests.py's Received: `segments` segments of `segment_items`, counts[s] of them in
// segment s): the first claim of a vertex not visited yet sets its visited bit and parent and
// appends it to the next queue (local index), counted as top_down_expand counts.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
claim_requests(const int* __restrict__ vertices, const int* __restrict__ parents, i64 segment_items, int segments,
               const u64* __restrict__ counts, i64 first_vertex, const i64* __restrict__ offsets, u32 hub_degree,
               u32* __restrict__ visited, int* __restrict__ parent, int* __restrict__ next_queue,
               u64* __restrict__ counters) {
    LevelTally tally;
    const i64 items = segment_items * segments;
    const i64 stride = (i64)gridDim.x * BLOCK_THREADS;
    for (i64 base = blockIdx.x * (i64)BLOCK_THREADS; base < items; base += stride) {
        const i64 i = base + threadIdx.x;
        bool take = false;
        int local = 0;
        if (i < items && is_received(i, segment_items, counts)) {
            const int v = vertices[i];
            local = (int)(v - first_vertex);
            take = claim(visited, v);
            if (take) {
                parent[local] = parents[i];
                tally.queued(degree_of(offsets, local), hub_degree);
            }
        }
        warp_append(take, local, next_queue, &counters[FRONTIER_SIZE]);
    }
    tally.add_to(counters);
}

// The switching rule of bfs.py (beamer_direction's top-down case, or hub-share) as the host
// evaluates it: bottom-up when the frontier holds at least min_bottom_up_size vertices and
// more than unexplored / alpha edges (alpha 0: never), or more than max_hubs hubs.
__device__ __forceinline__ bool bottom_up_wanted(u64 size, u64 edges, u64 hubs, u64 unexplored, double alpha,
                                                 double min_bottom_up_size, u64 max_hubs) {
    return (alpha > 0 && (double)size >= min_bottom_up_size && (double)edges > (double)unexplored / alpha)
           || hubs > max_hubs;
}

// Top-down levels of a small frontier in one block, with no host round trip between them.
// The frontier is `queue`, its size, edges and hubs in the counters (as start_search, the last
// level or a top-down expansion launched just before left them); `unexplored` counts the edges
// of the vertices never in a frontier, this one's included. While the frontier holds at most
// SMALL_FRONTIER vertices and max_edges edges, bottom_up_wanted says no (from level ruled_from
// on: 1 where the host has chosen the first level, 0 where it launched this blind), and for at
// most max_levels levels: stage its vertices and the prefix sums of their degrees in shared memory,
// claim the neighbours as top_down_expand does (each thread takes edges THREADS apart, finding
// its vertex by binary search), append them to the other queue and swap. The counters then
// hold the last frontier's size, edges and hubs, LEVELS_DONE and UNEXPLORED_EDGES (the frontier
// is in `queue` after an even number of levels); the bottom-up counters are zeroed. A frontier
// it does not take (zero levels) is left as it came, so the host may launch it blind.
extern "C" __global__ void __launch_bounds__(THREADS)
top_down_small_levels(int* __restrict__ queue, int* __restrict__ other_queue, const i64* __restrict__ offsets,
                      const int* __restrict__ neighbors, u32 hub_degree, u64 max_edges, int max_levels,
                      u64 unexplored, int ruled_from, double alpha, double min_bottom_up_size, u64 max_hubs,
                      u32* __restrict__ visited, int* __restrict__ parent, u64* __restrict__ counters) {
    __shared__ u64 edge_end[SMALL_FRONTIER];
    __shared__ i64 row_begin[SMALL_FRONTIER];
    __shared__ int vertex[SMALL_FRONTIER];
    __shared__ u64 next_edges, next_hubs;
    __shared__ u32 next_size;
    u64 size = counters[FRONTIER_SIZE], edges = counters[FRONTIER_EDGES], hubs = counters[FRONTIER_HUBS];
    unexplored -= edges;
    int levels = 0;
    while (size && size <= SMALL_FRONTIER && edges <= max_edges && levels < max_levels
           && (levels < ruled_from
               || !bottom_up_wanted(size, edges, hubs, unexplored, alpha, min_bottom_up_size, max_hubs))) {
        stage_small_frontier(queue, (int)size, offsets, offsets + 1, vertex, row_begin, edge_end);
        if (threadIdx.x == 0) {
            next_size = 0;
            next_edges = next_hubs = 0;
        }
        __syncthreads();
        u64 claimed_edges = 0, claimed_hubs = 0;
        for (u64 e = threadIdx.x; e < edges; e += THREADS) {
            int index;
            const int v = neighbors[small_frontier_edge(e, (int)size, edge_end, row_begin, &index)];
            if (!claim(visited, v)) continue;
            parent[v] = vertex[index];
            other_queue[atomicAdd(&next_size, 1u)] = v;
            const u32 degree = degree_of(offsets, v);
            claimed_edges += degree;
            claimed_hubs += degree >= hub_degree;
        }
        if (claimed_edges) atomicAdd(&next_edges, claimed_edges);
        if (claimed_hubs) atomicAdd(&next_hubs, claimed_hubs);
        __syncthreads();
        size = next_size;
        edges = next_edges;
        hubs = next_hubs;
        unexplored -= edges;
        int* const swapped = queue;
        queue = other_queue;
        other_queue = swapped;
        ++levels;
        __syncthreads();  // every thread has read the level's totals before the next level resets them
    }
    if (threadIdx.x == 0) {
        counters[FRONTIER_SIZE] = size;
        counters[FRONTIER_EDGES] = edges;
        counters[FRONTIER_HUBS] = hubs;
        counters[LONG_QUEUE_SIZE] = counters[SCANNED_VERTICES] = counters[SCANNED_EDGES] = 0;
        counters[LEVELS_DONE] = levels;
        counters[UNEXPLORED_EDGES] = unexplored;
    }
}

// Several GPUs: top-down levels of a small frontier with no host step between them
// (bfs_distributed.py captures a level in a CUDA graph: small_level_decide, small_level_expand,
// the requests' blind exchange, claim_requests and an allreduce of the next frontier's size and
// edges, launched several times a host read). `state` carries them from level to level:
#define SMALL_GO 0            // this level runs
#define SMALL_STOPPED 1       // a level did not run: none after it does
#define SMALL_LEVELS 2        // levels run since small_levels_begin
#define SMALL_UNEXPLORED 3    // edges of the vertices never in a frontier, the current one's included
#define SMALL_SIZE 4          // the rank's part of the frontier the level expands
#define SMALL_GLOBAL_SIZE 5   // the frontier's size and edges over every rank (the allreduce's)
#define SMALL_GLOBAL_EDGES 6
#define SMALL_CHOSEN 7        // the host chose this level's direction: the switching rule is not asked
#define SMALL_STATE 8

// chosen: the host chose the first level's direction (0 at the search's root, whose frontier's
// size and edges an allreduce of the ranks' counters writes into the state after this).
extern "C" __global__ void small_levels_begin(u64* __restrict__ state, u64 size, u64 edges, u64 unexplored,
                                              int chosen) {
    state[SMALL_GO] = state[SMALL_STOPPED] = state[SMALL_LEVELS] = state[SMALL_SIZE] = 0;
    state[SMALL_UNEXPLORED] = unexplored;
    state[SMALL_GLOBAL_SIZE] = size;
    state[SMALL_GLOBAL_EDGES] = edges;
    state[SMALL_CHOSEN] = chosen;
}

// One thread. The level runs while the frontier is small (at most SMALL_FRONTIER vertices and
// max_edges edges over every rank) and, unless the host chose, the switching rule keeps it
// top-down (bottom_up_wanted as the host asks it, no hub rule). A level that runs moves the
// rank's frontier size from the counters to the state and starts the next frontier's counts at
// zero. The requests' sizes (sent, then received: 2 num_ranks words) are zeroed either way: the
// exchange of a level that does not run sends none.
extern "C" __global__ void small_level_decide(u64* __restrict__ state, u64* __restrict__ counters,
                                              u64* __restrict__ request_sizes, int num_ranks, u64 max_edges,
                                              double alpha, double min_bottom_up_size) {
    for (int r = 0; r < 2 * num_ranks; ++r) request_sizes[r] = 0;
    bool go = false;
    if (!state[SMALL_STOPPED]) {
        const u64 size = state[SMALL_GLOBAL_SIZE], edges = state[SMALL_GLOBAL_EDGES];
        const u64 rest = state[SMALL_UNEXPLORED] - edges;
        go = size && size <= SMALL_FRONTIER && edges <= max_edges
             && (state[SMALL_CHOSEN] || !bottom_up_wanted(size, edges, 0, rest, alpha, min_bottom_up_size, ~0ull));
        if (go) {
            state[SMALL_UNEXPLORED] = rest;
            state[SMALL_LEVELS] += 1;
            state[SMALL_SIZE] = counters[FRONTIER_SIZE];
            counters[FRONTIER_SIZE] = counters[FRONTIER_EDGES] = counters[FRONTIER_HUBS] = 0;
        } else {
            state[SMALL_STOPPED] = 1;
        }
        state[SMALL_CHOSEN] = 0;
    }
    state[SMALL_GO] = go;
}

// The level's expansion, a grid of any size (each block stages the whole frontier, the rank's
// queue of local indices): claims as top_down_expand's, but a claimed vertex of another rank's
// block goes straight into the requests' send buffers, in its owner's segment (which starts at
// owner * block), counted in the owner's request size.
extern "C" __global__ void __launch_bounds__(THREADS)
small_level_expand(const u64* __restrict__ state, const int* __restrict__ queue, const i64* __restrict__ offsets,
                   const int* __restrict__ neighbors, u32 hub_degree, i64 first_vertex, i64 num_local, i64 block,
                   u32* __restrict__ visited, int* __restrict__ parent, int* __restrict__ next_queue,
                   u64* __restrict__ counters, int* __restrict__ sent_vertices, int* __restrict__ sent_parents,
                   u64* __restrict__ request_sizes) {
    if (!state[SMALL_GO]) return;
    __shared__ u64 edge_end[SMALL_FRONTIER];
    __shared__ i64 row_begin[SMALL_FRONTIER];
    __shared__ int vertex[SMALL_FRONTIER];
    const int size = (int)state[SMALL_SIZE];
    const u64 edges = stage_small_frontier(queue, size, offsets, offsets + 1, vertex, row_begin, edge_end);
    LevelTally tally;
    const u64 stride = (u64)gridDim.x * THREADS;
    for (u64 base = blockIdx.x * (u64)THREADS; base < edges; base += stride) {
        const u64 e = base + threadIdx.x;
        bool take = false;
        int local = 0;
        if (e < edges) {
            int index;
            const int v = neighbors[small_frontier_edge(e, size, edge_end, row_begin, &index)];
            if (claim(visited, v)) {
                const int claimer = (int)(first_vertex + vertex[index]);
                const i64 mine = v - first_vertex;
                if (mine >= 0 && mine < num_local) {
                    parent[mine] = claimer;
                    local = (int)mine;
                    take = true;
                    tally.queued(degree_of(offsets, local), hub_degree);
                } else {
                    const i64 owner = v / block;
                    const i64 at = owner * block + (i64)atomicAdd(&request_sizes[owner], 1ull);
                    sent_vertices[at] = v;
                    sent_parents[at] = claimer;
                }
            }
        }
        warp_append(take, local, next_queue, &counters[FRONTIER_SIZE]);
    }
    tally.add_to(counters);
}

// Construction: each vertex's neighbour of largest degree (the smallest such label; -1
// without neighbours). A warp per vertex: the lanes stride over the row, then reduce. The
// neighbours' degrees come from `degrees` (every vertex's, where the rows are a rank's
// block of a graph split over GPUs), or from the offsets when it is null.
extern "C" __global__ void __launch_bounds__(THREADS)
strongest_neighbours(i64 num_vertices, const i64* __restrict__ offsets, const int* __restrict__ neighbors,
                     const u32* __restrict__ degrees, int* __restrict__ strongest) {
    const int lane = threadIdx.x & 31;
    const i64 num_warps = (i64)gridDim.x * WARPS;
    for (i64 v = blockIdx.x * (i64)WARPS + (threadIdx.x >> 5); v < num_vertices; v += num_warps) {
        u64 best = 0;  // degree << 32 | (2^31 - 1 - label): the larger, the stronger
        for (i64 e = offsets[v] + lane; e < offsets[v + 1]; e += 32) {
            const int n = neighbors[e];
            const u32 degree = degrees != nullptr ? degrees[n] : degree_of(offsets, n);
            best = max(best, (u64)degree << 32 | (u32)(0x7FFFFFFF - n));
        }
        for (int step = 16; step; step >>= 1) best = max(best, __shfl_xor_sync(FULL_MASK, best, step));
        if (lane == 0) strongest[v] = best ? 0x7FFFFFFF - (int)(best & 0xFFFFFFFFu) : -1;
    }
}

// Bottom-up level, one vertex v of the rank's block: first its strongest neighbour (a hub, in
// the frontier at the level where the hubs are), then up to `short_scan` of its neighbours,
// BOTTOM_UP_PROBES at a time, to the first one in the frontier, its parent. FOUND, or MORE:
// neighbours left for the long pass, or neither. Offsets and rows are read once,
// with the streaming hint (__ldcs: evict first), so that they do not push the frontier bitmap,
// read at random, out of L2.
#define FOUND 1
#define MORE 2
__device__ __forceinline__ int bottom_up_vertex(int v, const i64* __restrict__ offsets,
                                                const int* __restrict__ neighbors, const int* __restrict__ strongest,
                                                const u32* __restrict__ frontier, u32 short_scan, u32 hub_degree,
                                                int* __restrict__ parent, LevelTally& tally) {
    const i64 begin = __ldcs(&offsets[v]), end = __ldcs(&offsets[v + 1]);
    const i64 stop = min(end, begin + (i64)short_scan);
    bool found = false;
    if (strongest != nullptr) {
        const int hub = strongest[v];
        if (hub >= 0 && test_bit(frontier, hub)) {
            parent[v] = hub;
            found = true;
        }
        tally.values[SCANNED_EDGES] += hub >= 0;
    }
    i64 e = begin;
    for (; e < stop && !found; e += BOTTOM_UP_PROBES) {
        int candidate[BOTTOM_UP_PROBES];
#pragma unroll
        for (int p = 0; p < BOTTOM_UP_PROBES; ++p)
            candidate[p] = e + p < stop ? __ldcs(&neighbors[e + p]) : -1;
#pragma unroll
        for (int p = 0; p < BOTTOM_UP_PROBES; ++p)
            if (!found && candidate[p] >= 0 && test_bit(frontier, candidate[p])) {
                parent[v] = candidate[p];
                found = true;
            }
    }
    tally.values[SCANNED_EDGES] += min(e, stop) - begin;  // none when the strongest was found
    tally.values[SCANNED_VERTICES] += 1;
    if (found) tally.discovered((u32)(end - begin), hub_degree);
    return found ? FOUND : stop < end ? MORE : 0;
}

// Bottom-up level, first pass. A warp takes 32 words of the visited bitmap at once (a word a
// lane: late levels, where almost every word is full, cost one load a warp per 32 words
// instead of a latency-bound load per word), then their unvisited vertices (bottom_up_vertex)
// a lane each, 32 at a time, one of two ways. Where most of the 32 words' vertices are
// unvisited (the hubs' level), a word at a time, its vertices the lanes. Where few are (the
// levels after), listed in shared memory first, so that the lanes take them whatever word
// holds them: a word at a time would leave most lanes idle and take a step a word with any
// vertex left. The warp keeps its finds per word in shared memory and, as it owns the 32
// words, updates visited and writes the next frontier's words without global atomics.
// Vertices with neighbours left go to the long queue. At least 5 blocks an SM, as many as
// the registers allowed before the lists (ptxas otherwise takes fewer registers and spills).
extern "C" __global__ void __launch_bounds__(THREADS, 5)
bottom_up_scan(int num_words, const i64* __restrict__ offsets, const int* __restrict__ neighbors,
               const int* __restrict__ strongest, const u32* __restrict__ frontier, u32 short_scan,
               u32 hub_degree, u32* __restrict__ visited, u32* __restrict__ next_frontier,
               int* __restrict__ parent, int* __restrict__ long_queue, u64* __restrict__ counters) {
    __shared__ unsigned short unvisited[WARPS][32 * 32];  // the 32 words' unvisited vertices: word << 5 | bit
    __shared__ u32 found_words[WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int num_warps = gridDim.x * WARPS;
    LevelTally tally;
    for (int base = (blockIdx.x * WARPS + warp) * 32; base < num_words; base += num_warps * 32) {
        const int lane_word = base + lane;
        const u32 lane_seen = lane_word < num_words ? visited[lane_word] : FULL_MASK;
        const int count = __popc(~lane_seen);
        const int end_of_lane = warp_inclusive_scan(count);
        const int total = __shfl_sync(FULL_MASK, end_of_lane, 31);
        const u32 open_words = __ballot_sync(FULL_MASK, count > 0);
        found_words[warp][lane] = 0u;
        if ((total + 31) / 32 + LISTED_STEPS_SAVED > __popc(open_words)) {  // a word at a time
            __syncwarp();
            for (u32 open = open_words; open; open &= open - 1) {
                const int word = __ffs(open) - 1;
                const u32 seen = __shfl_sync(FULL_MASK, lane_seen, word);
                const int v = (base + word) << 5 | lane;
                const int outcome = (seen >> lane) & 1u ? 0 : bottom_up_vertex(
                    v, offsets, neighbors, strongest, frontier, short_scan, hub_degree, parent, tally);
                const u32 found_mask = __ballot_sync(FULL_MASK, outcome == FOUND);
                warp_append(outcome == MORE, v, long_queue, &counters[LONG_QUEUE_SIZE]);
                if (lane == 0) found_words[warp][word] = found_mask;
            }
        } else {  // listed first
            int at = end_of_lane - count;
            for (u32 open = ~lane_seen; open; open &= open - 1)
                unvisited[warp][at++] = (unsigned short)(lane << 5 | (__ffs(open) - 1));
            __syncwarp();
            for (int first = 0; first < total; first += 32) {
                const int i = first + lane;
                const int listed = i < total ? unvisited[warp][i] : 0;
                const int v = (base << 5) + listed;
                const int outcome = i < total ? bottom_up_vertex(v, offsets, neighbors, strongest, frontier,
                                                                 short_scan, hub_degree, parent, tally) : 0;
                if (outcome == FOUND) atomicOr(&found_words[warp][listed >> 5], 1u << (listed & 31));
                warp_append(outcome == MORE, v, long_queue, &counters[LONG_QUEUE_SIZE]);
            }
        }
        __syncwarp();
        if (lane_word < num_words) {
            const u32 found_mask = found_words[warp][lane];
            if (found_mask) visited[lane_word] = lane_seen | found_mask;
            next_frontier[lane_word] = found_mask;
        }
        __syncwarp();  // the shared words and list are the next 32 words'
    }
    tally.add_to(counters);
}

// Bottom-up level, second pass: one warp per long-queue vertex reads its remaining
// neighbours 32 at a time and stops at the first chunk with one in the frontier.
// Runs after bottom_up_scan; words are shared among warps now, hence atomicOr.
extern "C" __global__ void __launch_bounds__(THREADS)
bottom_up_long(const int* __restrict__ long_queue, const i64* __restrict__ offsets,
               const int* __restrict__ neighbors, const u32* __restrict__ frontier, u32 short_scan,
               u32 hub_degree, u32* __restrict__ visited, u32* __restrict__ next_frontier,
               int* __restrict__ parent, u64* __restrict__ counters) {
    const int lane = threadIdx.x & 31;
    const u64 num_long = counters[LONG_QUEUE_SIZE];
    const u64 num_warps = (u64)gridDim.x * WARPS;
    LevelTally tally;
    for (u64 i = blockIdx.x * WARPS + (threadIdx.x >> 5); i < num_long; i += num_warps) {
        const int v = long_queue[i];
        const i64 begin = offsets[v], end = offsets[v + 1];
        int found_parent = -1;
        i64 chunk = begin + short_scan;
        for (; chunk < end; chunk += 32) {
            const i64 e = chunk + lane;
            const int candidate = e < end ? __ldcs(&neighbors[e]) : -1;
            const u32 hits = __ballot_sync(FULL_MASK, candidate >= 0 && test_bit(frontier, candidate));
            if (hits) {
                found_parent = __shfl_sync(FULL_MASK, candidate, __ffs(hits) - 1);
                break;
            }
        }
        if (lane == 0) {
            tally.values[SCANNED_EDGES] += min(chunk + 32, end) - (begin + short_scan);
            if (found_parent >= 0) {
                parent[v] = found_parent;
                atomicOr(&visited[v >> 5], 1u << (v & 31));
                atomicOr(&next_frontier[v >> 5], 1u << (v & 31));
                tally.discovered((u32)(end - begin), hub_degree);
            }
        }
    }
    tally.add_to(counters);
}

// Direction switch, top-down to bottom-up: set the queue's bits in a cleared bitmap. The queue
// holds queue_size vertices, or as many as the counter *size_counter where that is given (a
// switch captured in a CUDA graph, its size on the device only); a grid of any size.
extern "C" __global__ void __launch_bounds__(THREADS)
queue_to_bitmap(const int* __restrict__ queue, int queue_size, const u64* __restrict__ size_counter,
                u32* __restrict__ bitmap) {
    const int size = size_counter != nullptr ? (int)*size_counter : queue_size;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < size; i += gridDim.x * THREADS)
        atomicOr(&bitmap[queue[i] >> 5], 1u << (queue[i] & 31));
}

// Direction switch, bottom-up to top-down: each word writes its vertices, in order, from
// its rank (word_end: inclusive prefix sums of the word populations). The queue comes
// out sorted, without atomics.
extern "C" __global__ void __launch_bounds__(THREADS)
bitmap_to_queue(const u32* __restrict__ bitmap, int num_words, const u64* __restrict__ word_end,
                int* __restrict__ queue) {
    const int w = blockIdx.x * THREADS + threadIdx.x;
    if (w >= num_words) return;
    u32 bits = bitmap[w];
    u64 rank = word_end[w] - __popc(bits);
    for (; bits; bits &= bits - 1) queue[rank++] = (w << 5) | (__ffs(bits) - 1);
}

// A degree-ordered graph's search ends here: the parents under the input's labels, for
// input label v: original[v] = order[parent[new_label[v]]], -1 where the search never reached
// new_label[v] (its visited bit clear, or a vertex without edges: label >= filled_vertices,
// unless it is the root), so that the search writes no -1. A gather, so the writes are
// coalesced (scattering through order wrote 4 bytes at random per vertex: 3.5x slower at
// SCALE 26). The random reads are of parent (visited is a few MiB, in L2); each thread maps
// REMAP_VERTICES consecutive vertices, so that their independent loads are in flight together.
#define REMAP_VERTICES 4

__device__ __forceinline__ int input_parent(int x, i64 filled_vertices, int root, i64 first_vertex,
                                            const int* __restrict__ order, const u32* __restrict__ visited,
                                            const int* __restrict__ parent) {
    const int p = x < filled_vertices ? (test_bit(visited, x) ? parent[x] : -1)
                                      : (x == root ? (int)(root + first_vertex) : -1);
    return p >= 0 ? order[p] : -1;
}

// On several GPUs the rank's block, [first_vertex, first_vertex + num_vertices): the vertices,
// parents and visited bits are local (x = block_label[v] - first_vertex, block_label the block's
// part of new_label), the parents and order global; root under the graph's labels.
extern "C" __global__ void __launch_bounds__(THREADS)
parents_to_input_labels(i64 num_vertices, i64 filled_vertices, int graph_root, i64 first_vertex,
                        const int* __restrict__ order, const int* __restrict__ block_label,
                        const u32* __restrict__ visited, const int* __restrict__ parent, int* __restrict__ original) {
    const int root = (int)(graph_root - first_vertex);
    const int shift = (int)first_vertex;
    const i64 first = (blockIdx.x * (i64)THREADS + threadIdx.x) * REMAP_VERTICES;
    if (first + REMAP_VERTICES <= num_vertices) {
        const int4 x = *reinterpret_cast<const int4*>(&block_label[first]);
        *reinterpret_cast<int4*>(&original[first]) =
            make_int4(input_parent(x.x - shift, filled_vertices, root, first_vertex, order, visited, parent),
                      input_parent(x.y - shift, filled_vertices, root, first_vertex, order, visited, parent),
                      input_parent(x.z - shift, filled_vertices, root, first_vertex, order, visited, parent),
                      input_parent(x.w - shift, filled_vertices, root, first_vertex, order, visited, parent));
    } else {
        for (i64 v = first; v < num_vertices; ++v)
            original[v] = input_parent(block_label[v] - shift, filled_vertices, root, first_vertex, order, visited,
                                       parent);
    }
}
