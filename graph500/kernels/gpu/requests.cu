// Requests to the owners of vertices (see requests.py): a rank's touched vertices, in label
// order, are grouped by owner already; their staged values are taken from one word per vertex.

// How many touched vertices go to each rank: word_end (inclusive prefix sums of the touched
// words' populations) at each rank's last word, differenced.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
owner_counts(const u64* __restrict__ word_end, const int* __restrict__ block_last_word, int num_ranks,
             u64* __restrict__ counts) {
    const int rank = blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (rank >= num_ranks) return;
    const int last = block_last_word[rank], previous = rank ? block_last_word[rank - 1] : -1;
    const u64 through = last >= 0 ? word_end[last] : 0;
    counts[rank] = through - (previous >= 0 ? word_end[previous] : 0);
}

// The touched vertices' values: values[i] = staging[vertices[i]], then staging[vertices[i]] = reset.
template <typename Value>
__global__ void __launch_bounds__(BLOCK_THREADS)
take_values(const int* __restrict__ vertices, int count, Value* __restrict__ staging, Value reset,
            Value* __restrict__ values) {
    const int i = blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= count) return;
    const int v = vertices[i];
    values[i] = staging[v];
    staging[v] = reset;
}
