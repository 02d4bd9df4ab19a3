// The GPU validators' tuple passes (`graph500.validators.device`): one thread a tuple of a chunk the caller staged
// in device memory, for the rules a tuple decides (bfs steps 4-5, sssp steps 3-4). A rule's first offender is the
// lowest tuple index any thread found (an atomic minimum over the whole pass, chunk offsets added), so no chunk
// needs the host; confirmations are plain stores of true (threads that race write the same value).
// parents are -1 exactly where a vertex is unreached (the callers checked the ranges first).

#define NOT_FOUND 0xffffffffffffffffull

__device__ __forceinline__ void offend(unsigned long long* first_offender, unsigned long long index)
{
    if (index < *first_offender) {  // a read first: a faulty tree's many offenders mostly skip the atomic
        atomicMin(first_offender, index);
    }
}

// A vertex's parent and its level (BFS, as an Index) or float32 distance (SSSP) side by side
// (`device.vertex_records`): a pass reads both of each endpoint at random, one memory sector where two arrays take
// two.
template <typename Index, typename Value>
struct alignas(2 * sizeof(Index)) VertexRecord {
    Index parent;
    Value value;
};

// BFS: firsts[0] the first reached-unreached tuple, firsts[1] the first level jump (both reached, levels more
// than one apart); confirmed[u] where u's parent is v, confirmed[v] where v's parent is u.
template <typename Index>
__global__ void bfs_tuple_pass(const Index* src, const Index* dst, long long count, long long first,
                               const VertexRecord<Index, Index>* records, bool* confirmed,
                               unsigned long long* firsts)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    Index u = src[i], v = dst[i];
    VertexRecord<Index, Index> record_u = records[u], record_v = records[v];
    long long level_u = record_u.value, level_v = record_v.value;
    if ((level_u < 0) != (level_v < 0)) {
        offend(&firsts[0], first + i);
        return;
    }
    if (level_u < 0) {
        return;
    }
    if (level_u - level_v > 1 || level_v - level_u > 1) {
        offend(&firsts[1], first + i);
    }
    if (record_u.parent == v) {
        confirmed[u] = true;
    }
    if (record_v.parent == u) {
        confirmed[v] = true;
    }
}

__device__ __forceinline__ void note_tie(long long vertex, long long* ties, unsigned long long* tie_count,
                                         long long tie_capacity)
{
    if (tie_capacity > 0) {
        unsigned long long slot = atomicAdd(tie_count, 1ull);
        if (slot < (unsigned long long)tie_capacity) {
            ties[slot] = vertex;
        }
    }
}

// SSSP (float32 sums, as the reference): firsts[0] the first reached-unreached tuple, firsts[1] the first tuple
// whose weight would make one endpoint nearer; confirmed[x] where the tuple joins x to its parent with the weight
// that makes its distance; such an x as near as its parent (a tie) goes to ties[] while tie_capacity lasts
// (tie_count counts them all).
template <typename Index>
__global__ void sssp_tuple_pass(const Index* src, const Index* dst, const float* weights, long long count,
                                long long first, const VertexRecord<Index, float>* records, bool* confirmed,
                                unsigned long long* firsts, long long* ties, unsigned long long* tie_count,
                                long long tie_capacity)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    Index u = src[i], v = dst[i];
    VertexRecord<Index, float> record_u = records[u], record_v = records[v];
    Index parent_u = record_u.parent, parent_v = record_v.parent;
    if ((parent_u < 0) != (parent_v < 0)) {
        offend(&firsts[0], first + i);
        return;
    }
    if (parent_u < 0) {
        return;
    }
    float weight = weights[i], distance_u = record_u.value, distance_v = record_v.value;
    float via_u = __fadd_rn(distance_u, weight), via_v = __fadd_rn(distance_v, weight);
    if (distance_v > via_u || distance_u > via_v) {
        offend(&firsts[1], first + i);
    }
    if (parent_u == v && distance_u == via_v) {
        confirmed[u] = true;
        if (distance_u == distance_v) {
            note_tie(u, ties, tie_count, tie_capacity);
        }
    }
    if (parent_v == u && distance_v == via_u) {
        confirmed[v] = true;
        if (distance_v == distance_u) {
            note_tie(v, ties, tie_count, tie_capacity);
        }
    }
}

// The place of each label among the set bits of words (word_ranks[w]: the set bits before word w), elsewhere
// where its bit is clear, -1 where the label is negative.
template <typename Label, typename Place>
__global__ void bit_places(const Label* labels, long long count, const unsigned long long* words,
                           const long long* word_ranks, Place elsewhere, Place* places)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    long long label = labels[i];
    if (label < 0) {
        places[i] = -1;
        return;
    }
    unsigned long long word = words[label >> 6], below = (1ull << (label & 63)) - 1;
    places[i] = (word >> (label & 63)) & 1 ? (Place)(word_ranks[label >> 6] + __popcll(word & below)) : elsewhere;
}

// The set bits of each word.
extern "C" __global__ void word_counts(const unsigned long long* words, long long num_words, long long* counts)
{
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < num_words) {
        counts[w] = __popcll(words[w]);
    }
}

// The labels of the set bits, in order: word w's at labels[word_ranks[w]:].
extern "C" __global__ void bit_labels(const unsigned long long* words, long long num_words, const long long* word_ranks,
                           long long* labels)
{
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w >= num_words) {
        return;
    }
    long long at = word_ranks[w];
    for (unsigned long long word = words[w]; word != 0; word &= word - 1) {
        labels[at++] = w * 64 + __ffsll((long long)word) - 1;
    }
}

// The bit of every label in words (labels at most once each or not: an atomic or).
template <typename Label>
__global__ void set_bits(const Label* labels, long long count, unsigned long long* words)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < count) {
        long long label = labels[i];
        atomicOr(&words[label >> 6], 1ull << (label & 63));
    }
}

// The distributed BFS validator's round of levels (`distributed._levels_from_root`), a thread a vertex of the
// rank's block: an unleveled vertex whose parent's bit is set in ``level_words`` (the bitmap of all N vertices at
// the round's level) takes ``level`` and its bit in ``next_words`` (the block's words, cleared by the caller; a
// warp's 32 vertices share half a word, set by one atomic OR); ``found`` counts the vertices that took it (a
// block's sum, one atomic add). parents are -1 exactly where a vertex is unreached; the root holds level 0.
template <typename Index, typename Level>
__global__ void descend_levels(const Index* parents, long long count, const unsigned long long* level_words,
                               Level* levels, long long level, unsigned long long* next_words,
                               unsigned long long* found)
{
    __shared__ unsigned long long block_found;
    if (threadIdx.x == 0) {
        block_found = 0;
    }
    __syncthreads();
    long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    bool joins = false;
    if (v < count && levels[v] < 0) {
        long long parent = parents[v];
        joins = parent >= 0 && ((level_words[parent >> 6] >> (parent & 63)) & 1ull);
        if (joins) {
            levels[v] = (Level)level;
        }
    }
    unsigned int warp_bits = __ballot_sync(0xffffffffu, joins);
    if ((threadIdx.x & 31) == 0 && warp_bits) {  // lane 0 holds the warp's first vertex, a multiple of 32
        atomicOr(&next_words[v >> 6], (unsigned long long)warp_bits << (v & 32));
        atomicAdd(&block_found, (unsigned long long)__popc(warp_bits));
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_found) {
        atomicAdd(found, block_found);
    }
}
