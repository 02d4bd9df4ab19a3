// Kernel 1 on the GPU: edge tuples to the undirected CSR graph (see build.py for the algorithm).
//
// Templates over the label type of the input tuples (int or long long) are
// instantiated by name from build.py. Keys are 64-bit: row << 32 | neighbour.

#define THREADS BLOCK_THREADS
#define SCAN_ITEMS 8
#define SCAN_TILE (THREADS * SCAN_ITEMS)
#define INFINITY_BITS 0x7F800000u  // larger patterns: NaN, or a sign bit (negative, -0.0)

// Errors found in the tuples: [0] labels out of range, [1] bad weights.
#define ERROR_LABEL 0
#define ERROR_WEIGHT 1

// Degree ordering: degrees[v] += 1 for each endpoint v of a tuple that is not a
// self-loop (duplicates counted); tuples with a label out of range are skipped
// (count_buckets reports them).
template <typename Label>
__global__ void __launch_bounds__(THREADS)
count_degrees(const Label* __restrict__ src, const Label* __restrict__ dst, i64 num_tuples, i64 num_vertices,
              u32* __restrict__ degrees) {
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < num_tuples; i += (i64)gridDim.x * THREADS) {
        const i64 u = src[i], v = dst[i];
        if (u == v || u < 0 || v < 0 || u >= num_vertices || v >= num_vertices) continue;
        atomicAdd(&degrees[u], 1u);
        atomicAdd(&degrees[v], 1u);
    }
}

// Row buckets: bucket b holds the rows [bounds[b], bounds[b + 1]); the bounds (num_buckets + 1,
// ascending: from 0 to the vertex count, or a row range's first and end) are copied to shared
// memory beside a per-bucket array of u32, and a row's bucket is found by binary search.
__device__ __forceinline__ u32* load_buckets(const u32* __restrict__ bucket_bounds, int num_buckets) {
    extern __shared__ u32 shared[];  // num_buckets per-bucket values, then num_buckets + 1 bounds
    for (int b = threadIdx.x; b <= num_buckets; b += THREADS) {
        if (b < num_buckets) shared[b] = 0;
        shared[num_buckets + b] = bucket_bounds[b];
    }
    __syncthreads();
    return shared;
}

// Whether a row is one of the buckets' (a build of a row range leaves the other rows' entries out).
__device__ __forceinline__ bool in_buckets(const u32* shared, int num_buckets, i64 row) {
    return row >= (i64)shared[num_buckets] && row < (i64)shared[2 * num_buckets];
}

__device__ __forceinline__ int bucket_of(const u32* shared, int num_buckets, i64 row) {
    const u32* bounds = shared + num_buckets;
    int low = 0, high = num_buckets;  // bounds[low] <= row < bounds[high]
    while (high - low > 1) {
        const int middle = (low + high) >> 1;
        if (bounds[middle] <= (u32)row) low = middle; else high = middle;
    }
    return low;
}

// Bucket bounds sharing the keys equally, from each row's inclusive running key count
// (entries_through): bound 0 is row 0, bound num_buckets the vertex count, bound b between
// them the row after the first whose running count reaches b / num_buckets of the keys. A
// row holding more than a share (a hub) makes equal bounds: empty buckets, which
// bucket_of never returns.
extern "C" __global__ void __launch_bounds__(THREADS)
bounds_by_share(const u64* __restrict__ entries_through, i64 num_vertices, int num_buckets,
                u32* __restrict__ bucket_bounds) {
    const int b = blockIdx.x * THREADS + threadIdx.x;
    if (b > num_buckets) return;
    if (b == 0 || b == num_buckets || num_vertices == 0) {
        bucket_bounds[b] = b == 0 ? 0u : (u32)num_vertices;
        return;
    }
    const u64 share = b * entries_through[num_vertices - 1] / num_buckets;
    i64 low = 0, high = num_vertices - 1;  // the first row with entries_through[row] >= share
    while (low < high) {
        const i64 middle = (low + high) >> 1;
        if (entries_through[middle] >= share) high = middle; else low = middle + 1;
    }
    bucket_bounds[b] = (u32)min(low + 1, num_vertices);
}

// Step 1: per block, count the directed entries falling in each row bucket into
// block_counts[block * num_buckets + bucket]; count tuples with labels out of range and
// non-self-loops with bad weights.
template <typename Label>
__global__ void __launch_bounds__(THREADS)
count_buckets(const Label* __restrict__ src, const Label* __restrict__ dst, const u32* __restrict__ weight_bits,
              const int* __restrict__ new_label, i64 num_tuples, i64 num_vertices,
              const u32* __restrict__ bucket_bounds, int num_buckets, u32* __restrict__ block_counts,
              u64* __restrict__ errors) {
    u32* histogram = load_buckets(bucket_bounds, num_buckets);
    u32 bad_labels = 0, bad_weights = 0;
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < num_tuples; i += (i64)gridDim.x * THREADS) {
        i64 u = src[i], v = dst[i];
        if (u < 0 || v < 0 || u >= num_vertices || v >= num_vertices) {
            bad_labels++;
            continue;
        }
        if (u == v) continue;
        if (weight_bits != nullptr && weight_bits[i] > INFINITY_BITS) bad_weights++;
        const i64 row_u = renamed(new_label, u), row_v = renamed(new_label, v);
        if (in_buckets(histogram, num_buckets, row_u))
            atomicAdd(&histogram[bucket_of(histogram, num_buckets, row_u)], 1u);
        if (in_buckets(histogram, num_buckets, row_v))
            atomicAdd(&histogram[bucket_of(histogram, num_buckets, row_v)], 1u);
    }
    if (bad_labels) atomicAdd(&errors[ERROR_LABEL], (u64)bad_labels);
    if (bad_weights) atomicAdd(&errors[ERROR_WEIGHT], (u64)bad_weights);
    __syncthreads();
    for (int b = threadIdx.x; b < num_buckets; b += THREADS)
        block_counts[(i64)blockIdx.x * num_buckets + b] = histogram[b];
}

// Step 2: write each directed entry's key into its bucket, at the cursor this
// block owns there (block_cursors[block * num_buckets + bucket]). Must run with
// the grid of count_buckets, so that every block sees the same tuples.
template <typename Label>
__global__ void __launch_bounds__(THREADS)
scatter_keys(const Label* __restrict__ src, const Label* __restrict__ dst, const int* __restrict__ new_label,
             i64 num_tuples, const u32* __restrict__ bucket_bounds, int num_buckets,
             const u64* __restrict__ block_cursors, u64* __restrict__ keys) {
    u32* placed = load_buckets(bucket_bounds, num_buckets);  // entries this block has placed in each bucket
    const u64* cursors = block_cursors + (i64)blockIdx.x * num_buckets;
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < num_tuples; i += (i64)gridDim.x * THREADS) {
        if (src[i] == dst[i]) continue;
        const u64 u = (u64)renamed(new_label, src[i]), v = (u64)renamed(new_label, dst[i]);
        if (in_buckets(placed, num_buckets, u)) {
            const int bucket = bucket_of(placed, num_buckets, u);
            keys[cursors[bucket] + atomicAdd(&placed[bucket], 1u)] = (u << 32) | v;
        }
        if (in_buckets(placed, num_buckets, v)) {
            const int bucket = bucket_of(placed, num_buckets, v);
            keys[cursors[bucket] + atomicAdd(&placed[bucket], 1u)] = (v << 32) | u;
        }
    }
}

__device__ __forceinline__ bool starts_run(const u64* keys, u64 i) {
    return i == 0 || keys[i] != keys[i - 1];
}

// Step 3a: unique keys (first of each run of equal keys) in each tile of SCAN_TILE sorted keys.
extern "C" __global__ void __launch_bounds__(THREADS)
count_unique(const u64* __restrict__ keys, u64 num_keys, u32* __restrict__ tile_counts) {
    const u64 first = blockIdx.x * (u64)SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    u32 count = 0;
    for (int k = 0; k < SCAN_ITEMS; ++k)
        if (first + k < num_keys && starts_run(keys, first + k)) count++;
    __shared__ u32 total;
    block_exclusive_scan<u32>(count, &total);
    if (threadIdx.x == 0) tile_counts[blockIdx.x] = total;
}

// Step 3b: write the neighbour of every unique key at its rank, and offsets[r]
// for every row r: the rank of its first entry (rows without entries get the
// next row's). tile_inclusive: inclusive prefix sums of count_unique's counts.
extern "C" __global__ void __launch_bounds__(THREADS)
write_unique(const u64* __restrict__ keys, u64 num_keys, const u64* __restrict__ tile_inclusive,
             i64 num_vertices, i64* __restrict__ offsets, int* __restrict__ neighbors) {
    const u64 first = blockIdx.x * (u64)SCAN_TILE + threadIdx.x * SCAN_ITEMS;
    u32 unique_flags = 0, count = 0;
    for (int k = 0; k < SCAN_ITEMS; ++k)
        if (first + k < num_keys && starts_run(keys, first + k)) {
            unique_flags |= 1u << k;
            count++;
        }
    __shared__ u32 block_total;
    u64 rank = (blockIdx.x ? tile_inclusive[blockIdx.x - 1] : 0) + block_exclusive_scan<u32>(count, &block_total);
    for (int k = 0; k < SCAN_ITEMS; ++k) {
        if (!((unique_flags >> k) & 1u)) continue;
        const u64 i = first + k, key = keys[i];
        neighbors[rank] = (int)(key & 0xFFFFFFFFu);
        const i64 row = (i64)(key >> 32), previous_row = i ? (i64)(keys[i - 1] >> 32) : -1;
        for (i64 r = previous_row + 1; r <= row; ++r) offsets[r] = (i64)rank;
        rank++;
    }
    const u64 last = num_keys - 1;
    if (first <= last && last < first + SCAN_ITEMS) {
        const u64 total = tile_inclusive[gridDim.x - 1];
        for (i64 r = (i64)(keys[last] >> 32) + 1; r <= num_vertices; ++r) offsets[r] = (i64)total;
    }
}

// Position of `target` in the sorted run neighbors[begin:end] (it is there).
__device__ __forceinline__ i64 find_neighbor(const int* neighbors, i64 begin, i64 end, int target) {
    while (end - begin > 1) {
        const i64 middle = begin + ((end - begin) >> 1);
        if (neighbors[middle] <= target) begin = middle; else end = middle;
    }
    return begin;
}

// Step 4 (weighted): every CSR entry gets the least weight of the tuples that
// gave it. out_bits starts at all ones; non-negative float bit patterns order
// like the values, so an unsigned atomicMin on the bits is a min on the weights.
template <typename Label>
__global__ void __launch_bounds__(THREADS)
min_weights(const Label* __restrict__ src, const Label* __restrict__ dst, const u32* __restrict__ weight_bits,
            const int* __restrict__ new_label, i64 num_tuples, const i64* __restrict__ offsets,
            const int* __restrict__ neighbors, u32* __restrict__ out_bits) {
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < num_tuples; i += (i64)gridDim.x * THREADS) {
        if (src[i] == dst[i]) continue;
        const int u = (int)renamed(new_label, src[i]), v = (int)renamed(new_label, dst[i]);
        const u32 bits = weight_bits[i];
        if (offsets[u] < offsets[u + 1])  // an empty row: one a row-range build left out
            atomicMin(&out_bits[find_neighbor(neighbors, offsets[u], offsets[u + 1], v)], bits);
        if (offsets[v] < offsets[v + 1])
            atomicMin(&out_bits[find_neighbor(neighbors, offsets[v], offsets[v + 1], u)], bits);
    }
}

// For the search keys: bit v of `incident` (32-bit words) set for both endpoints of every tuple
// that is not a self-loop (the atomicOr skipped where the bit is set: hubs' words are hot).
template <typename Label>
__global__ void __launch_bounds__(THREADS)
mark_incident(const Label* __restrict__ src, const Label* __restrict__ dst, i64 num_tuples,
              u32* __restrict__ incident) {
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < num_tuples; i += (i64)gridDim.x * THREADS) {
        const Label u = src[i], v = dst[i];
        if (u == v) continue;
        const u32 u_bit = 1u << (u & 31), v_bit = 1u << (v & 31);
        if (!(incident[u >> 5] & u_bit)) atomicOr(&incident[u >> 5], u_bit);
        if (!(incident[v >> 5] & v_bit)) atomicOr(&incident[v >> 5], v_bit);
    }
}

// Rows sorted in place (build.py's sort_rows): keys[e - offsets[first_row]] = (row - first_row) << 32
// | entry e's rank in its row, for the num_rows rows from first_row, one warp a row. The rank: its
// weight's bits where by_weight (non-negative float32 patterns order like the values), else its
// neighbour's place in the interleaved blocks (label within its block * num_blocks + block).
extern "C" __global__ void __launch_bounds__(THREADS)
row_sort_keys(i64 first_row, i64 num_rows, const i64* __restrict__ offsets, const int* __restrict__ neighbors,
              const float* __restrict__ weights, int by_weight, i64 block, int num_blocks,
              u64* __restrict__ keys) {
    const int lane = threadIdx.x & 31;
    const i64 base = offsets[first_row], warps = (i64)gridDim.x * BLOCK_WARPS;
    for (i64 row = blockIdx.x * (i64)BLOCK_WARPS + (threadIdx.x >> 5); row < num_rows; row += warps) {
        const i64 end = offsets[first_row + row + 1];
        for (i64 e = offsets[first_row + row] + lane; e < end; e += 32) {
            const i64 owner = neighbors[e] / block;
            const u32 rank = by_weight ? __float_as_uint(weights[e])
                                                : (u32)((neighbors[e] - owner * block) * num_blocks + owner);
            keys[e - base] = (u64)row << 32 | rank;
        }
    }
}

// Rows sorted in place: the entries [first, first + count) in the order of `order` (CuPy's argsort of
// row_sort_keys): sorted_*[i] = entry first + order[i]; no weights where `weights` is null.
extern "C" __global__ void __launch_bounds__(THREADS)
gather_entries(i64 count, const i64* __restrict__ order, i64 first, const int* __restrict__ neighbors,
               const float* __restrict__ weights, int* __restrict__ sorted_neighbors,
               float* __restrict__ sorted_weights) {
    for (i64 i = blockIdx.x * (i64)THREADS + threadIdx.x; i < count; i += (i64)gridDim.x * THREADS) {
        const i64 e = first + order[i];
        sorted_neighbors[i] = neighbors[e];
        if (weights != nullptr) sorted_weights[i] = weights[e];
    }
}
