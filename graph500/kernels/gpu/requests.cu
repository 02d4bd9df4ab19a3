// Requests to the owners of vertices (see requests.py).

// Send the touched vertices: each set bit of `touched` (cleared here, and set in `sent`, the
// vertices sent since the last clear_sent) puts its vertex v and staging[v] (which keeps it) in
// the send buffers, in v's owner's segment, which starts at the owner's first vertex (blocks
// of `block` vertices: a segment holds at most its block). A warp takes 32 consecutive words;
// where they are one owner's (all but a block's edge), it reserves their slots with one
// atomicAdd on the owner's cursor.
template <typename Value>
__global__ void __launch_bounds__(BLOCK_THREADS)
send_touched(u32* __restrict__ touched, u32* __restrict__ sent, i64 num_words, i64 block,
             const Value* __restrict__ staging, int* __restrict__ vertices, Value* __restrict__ values,
             u64* __restrict__ cursors) {
    const int lane = threadIdx.x & 31;
    const i64 stride = (i64)gridDim.x * BLOCK_THREADS;
    for (i64 base = (blockIdx.x * (i64)BLOCK_WARPS + (threadIdx.x >> 5)) * 32; base < num_words; base += stride) {
        const i64 w = base + lane;
        const u32 bits = w < num_words ? touched[w] : 0u;
        const int owner = w < num_words ? (int)((w << 5) / block) : -1;
        const u32 count = __popc(bits);
        u64 slot = 0;
        if (__all_sync(FULL_MASK, owner == __shfl_sync(FULL_MASK, owner, 0))) {
            const u32 inclusive = warp_inclusive_scan(count);
            const u32 total = __shfl_sync(FULL_MASK, inclusive, 31);
            if (lane == 0 && total) slot = atomicAdd(&cursors[owner], (u64)total);
            slot = __shfl_sync(FULL_MASK, slot, 0) + inclusive - count;
        } else if (count) {
            slot = atomicAdd(&cursors[owner], (u64)count);
        }
        if (!bits) continue;
        touched[w] = 0u;
        sent[w] |= bits;
        const i64 at = (i64)owner * block + (i64)slot;
        u32 left = bits;
        for (int k = 0; left; ++k, left &= left - 1) {
            const int v = (int)((w << 5) | (__ffs(left) - 1));
            vertices[at + k] = v;
            values[at + k] = staging[v];
        }
    }
}

// Every staging word sent since the last call (a set bit of `sent`, cleared here) back to
// `initial`: a search starts afresh at the cost of what it sent, not of N words.
template <typename Value>
__global__ void __launch_bounds__(BLOCK_THREADS)
clear_sent(u32* __restrict__ sent, i64 num_words, Value* __restrict__ staging, Value initial) {
    for (i64 w = blockIdx.x * (i64)BLOCK_THREADS + threadIdx.x; w < num_words; w += (i64)gridDim.x * BLOCK_THREADS) {
        u32 bits = sent[w];
        if (!bits) continue;
        sent[w] = 0u;
        for (; bits; bits &= bits - 1) staging[(w << 5) | (__ffs(bits) - 1)] = initial;
    }
}
