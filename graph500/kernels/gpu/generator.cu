// The reference's Kronecker generator on the GPU (see generator.py), bit-identical to
// graph500/generators/kronecker.py. MRG state words are residues modulo p = 2^31 - 1,
// held as u32; products of two residues fit in u64.

#define THREADS BLOCK_THREADS
#define MODULUS 0x7FFFFFFFull
#define MULTIPLIER_X 107374182ull
#define MULTIPLIER_Y 104480ull
#define REJECT_BELOW 3647u  // (2^31 - 1) mod 10000
#define WEIGHT_SCALE 4.65661287524579692e-10
#define SCRAMBLE_MULT0 0x4519840211493211ull
#define SCRAMBLE_MULT1 0x3050852102C843A5ull
#define STATE_WORDS 5

// value mod p for any u64 value (Mersenne folding).
__device__ __forceinline__ u32 reduce_mod(u64 value) {
    value = (value & MODULUS) + (value >> 31);
    value = (value & MODULUS) + (value >> 31);
    return (u32)(value >= MODULUS ? value - MODULUS : value);
}

// state = matrix @ state modulo p; matrix: 5x5 residues, row-major.
__device__ __forceinline__ void advance(const u64* __restrict__ matrix, u32 state[STATE_WORDS]) {
    u32 next[STATE_WORDS];
#pragma unroll
    for (int row = 0; row < STATE_WORDS; ++row) {
        u64 sum = 0;
#pragma unroll
        for (int col = 0; col < STATE_WORDS; ++col) sum += reduce_mod(matrix[row * STATE_WORDS + col] * state[col]);
        next[row] = reduce_mod(sum);
    }
#pragma unroll
    for (int k = 0; k < STATE_WORDS; ++k) state[k] = next[k];
}

// One MRG draw: z (z1 newest .. z5 oldest) steps once; returns the new z1.
__device__ __forceinline__ u32 draw(u32 z[STATE_WORDS]) {
    const u32 value = reduce_mod(MULTIPLIER_X * z[0] + MULTIPLIER_Y * z[4]);
#pragma unroll
    for (int k = STATE_WORDS - 1; k > 0; --k) z[k] = z[k - 1];
    z[0] = value;
    return value;
}

__device__ __forceinline__ u64 scramble(u64 value, int scale, u64 val0, u64 val1) {
    value += val0 + val1;
    value *= val0 | SCRAMBLE_MULT0;
    value = __brevll(value) >> (64 - scale);
    value *= val1 | SCRAMBLE_MULT1;
    value = __brevll(value) >> (64 - scale);
    return value;
}

// Edges first_edge + i for i < count. Thread t generates i = t, t + T, t + 2T, ... (T threads
// in the grid, so stores are coalesced): its stream starts at (A^(2^64))^(first_edge + t) * seed,
// by square-and-multiply over stride_powers[k] = (A^(2^64))^(2^k), and moves T edges on by
// thread_stride = (A^(2^64))^T after each edge.
template <typename Label>
__global__ void __launch_bounds__(THREADS)
generate_edges(u64 first_edge, u64 count, int scale, const u64* __restrict__ seed,
               const u64* __restrict__ stride_powers, const u64* __restrict__ thread_stride, u64 val0, u64 val1,
               Label* __restrict__ src, Label* __restrict__ dst, float* __restrict__ weights) {
    const u64 threads = (u64)gridDim.x * THREADS;
    u64 i = blockIdx.x * (u64)THREADS + threadIdx.x;
    if (i >= count) return;
    u32 start[STATE_WORDS];
    for (int k = 0; k < STATE_WORDS; ++k) start[k] = (u32)seed[k];
    for (u64 remaining = first_edge + i, bit = 0; remaining; remaining >>= 1, ++bit)
        if (remaining & 1) advance(stride_powers + bit * STATE_WORDS * STATE_WORDS, start);
    for (; i < count; i += threads) {
        u32 z[STATE_WORDS];
#pragma unroll
        for (int k = 0; k < STATE_WORDS; ++k) z[k] = start[k];
        u64 src_prefix = 0, dst_prefix = 0;
        int prefixes_equal = 1;
        for (int level = 0; level < scale; ++level) {
            u32 u = draw(z);
            while (u < REJECT_BELOW) u = draw(z);
            // r picks B = (0,1) below 1900, C = (1,0) below 3800, A = (0,0) below 9500, D = (1,1) above;
            // while the prefixes are equal, (1,0) becomes (0,1) (clip-and-flip).
            const int r = (int)(u % 10000u);
            const int in_d = r >= 9500;
            int src_bit = (r >= 1900) & ((r < 3800) | in_d);
            int dst_bit = (r < 1900) | in_d;
            const int flip = prefixes_equal & src_bit & (1 - dst_bit);
            src_bit ^= flip;
            dst_bit ^= flip;
            prefixes_equal &= src_bit == dst_bit;
            src_prefix = (src_prefix << 1) | (u64)src_bit;
            dst_prefix = (dst_prefix << 1) | (u64)dst_bit;
        }
        weights[i] = (float)((double)(float)draw(z) * WEIGHT_SCALE);
        src[i] = (Label)scramble(src_prefix, scale, val0, val1);
        dst[i] = (Label)scramble(dst_prefix, scale, val0, val1);
        advance(thread_stride, start);
    }
}
