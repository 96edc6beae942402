//! Vectors at rest and at search time: the BLOB encoding (little-endian f32, so a
//! database file moves between machines), normalisation, the dot product and top-k
//! ranking over a contiguous matrix.
//!
//! Stored vectors are L2-normalised, so cosine similarity is a dot product. The dot
//! product keeps eight independent accumulators so the compiler can vectorise it
//! without `-ffast-math`.
//!
//! A [`Matrix`] holds its rows as 16-bit floats. A search reads every row of a
//! project, so the scan is bound by memory bandwidth: half the bytes is about half the
//! time, and half the resident memory. The components of a unit vector keep about
//! three significant digits, which moves a cosine by around 1e-4 — below what changes
//! a ranking in practice. Queries stay 32-bit.
//!
//! The one module of Cairn allowed `unsafe` (the crate denies it elsewhere): the AVX2
//! kernels in `wide` and the calls into them, each after the CPU check it relies on,
//! each with its SAFETY note.

#![allow(unsafe_code)]

use std::cmp::Ordering;

use half::f16;
use half::slice::HalfFloatSliceExt;

/// Encodes a vector as a BLOB: 4 bytes per component, little-endian.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Decodes a BLOB written by [`to_blob`]; `None` when its length is not `dim` × 4 (a
/// row from another model, or a damaged file), so the caller re-embeds it.
pub fn from_blob(b: &[u8], dim: usize) -> Option<Vec<f32>> {
    if b.len() != dim * 4 {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Scales `v` to unit length; leaves the zero vector alone.
pub fn normalize(v: &mut [f32]) {
    let n = dot(v, v).sqrt();
    if n > 0.0 && n.is_finite() {
        for x in v.iter_mut() {
            *x /= n;
        }
    }
}

/// The dot product; for normalised vectors, their cosine similarity. Extra components
/// of the longer vector are ignored.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s = (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// The dot product of a stored 16-bit row with a 32-bit query; extra components of the
/// longer one are ignored.
#[inline]
pub fn dot16(a: &[f16], q: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if wide::enabled() {
        // SAFETY: the CPU has just been checked for every feature the function is
        // compiled for.
        return unsafe { wide::dot16(a, q) };
    }
    dot16_portable(a, q)
}

/// [`dot16`] on any CPU.
fn dot16_portable(a: &[f16], q: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cq) = (a.chunks_exact(8), q.chunks_exact(8));
    let (ra, rq) = (ca.remainder(), cq.remainder());
    for (x, y) in ca.zip(cq) {
        for i in 0..8 {
            acc[i] += x[i].to_f32() * y[i];
        }
    }
    let mut s = (acc[0] + acc[4]) + (acc[1] + acc[5]) + (acc[2] + acc[6]) + (acc[3] + acc[7]);
    for (x, y) in ra.iter().zip(rq) {
        s += x.to_f32() * y;
    }
    s
}

/// Dot products of every row of `xs` with every row of `w`, both `k` wide:
/// `y[r·n + j] = x_r · w_j` with `n = w.len() / k`. `None` on a CPU without the vector
/// instructions it needs, or in an unoptimised build (see `wide::enabled`): the caller
/// takes its general matrix product instead.
pub fn products(xs: &[f32], w: &[f32], k: usize) -> Option<Vec<f32>> {
    if k == 0 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if wide::enabled() {
        // SAFETY: the CPU has just been checked for every feature the function is
        // compiled for.
        return Some(unsafe { wide::products(xs, w, k) });
    }
    None
}

/// [`dot16`] with AVX2, FMA and F16C: eight components widened per instruction. Without
/// them, widening one component at a time costs more than the memory it saves.
#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::*;

    use half::f16;

    /// Whether the kernels run: on a CPU that has the features, in an optimised
    /// build. Unoptimised, every intrinsic is a function call and the kernels are
    /// slower than the portable loop and candle's product (which the dev profile
    /// optimises), so debug builds and the tests they run stay quick.
    pub fn enabled() -> bool {
        !cfg!(debug_assertions) && available()
    }

    pub fn available() -> bool {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
    }

    /// See [`super::products`]. Each weight row is read once and serves up to four
    /// input rows at a time, each with two accumulators, so several FMA chains run at
    /// once.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn products(xs: &[f32], w: &[f32], k: usize) -> Vec<f32> {
        let n = w.len() / k;
        let rows = xs.len() / k;
        let mut y = vec![0f32; rows * n];
        for (j, wr) in w.chunks_exact(k).enumerate() {
            let mut r = 0;
            while r < rows {
                // The widest block that fits what is left of the input rows.
                let d: &[f32] = match rows - r {
                    4.. => &block::<4>(xs, r, k, wr),
                    2 | 3 => &block::<2>(xs, r, k, wr),
                    _ => &block::<1>(xs, r, k, wr),
                };
                for (i, v) in d.iter().enumerate() {
                    y[(r + i) * n + j] = *v;
                }
                r += d.len();
            }
        }
        y
    }

    /// Rows `r0..r0 + R` of `xs` dotted with `wr`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn block<const R: usize>(xs: &[f32], r0: usize, k: usize, wr: &[f32]) -> [f32; R] {
        assert!(wr.len() == k && xs.len() >= (r0 + R) * k);
        let steps = k / 16;
        let (mut a, mut b) = ([_mm256_setzero_ps(); R], [_mm256_setzero_ps(); R]);
        let (wp, xp) = (wr.as_ptr(), xs.as_ptr());
        for c in 0..steps {
            let o = c * 16;
            // SAFETY: o + 16 <= k, the length of `wr` and of every input row, which
            // all lie inside `xs` (both asserted above).
            let (w0, w1) = unsafe { (_mm256_loadu_ps(wp.add(o)), _mm256_loadu_ps(wp.add(o + 8))) };
            for i in 0..R {
                // SAFETY: as above.
                let (x0, x1) = unsafe {
                    let p = xp.add((r0 + i) * k + o);
                    (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)))
                };
                a[i] = _mm256_fmadd_ps(x0, w0, a[i]);
                b[i] = _mm256_fmadd_ps(x1, w1, b[i]);
            }
        }
        let mut out = [0f32; R];
        for i in 0..R {
            let s = _mm256_add_ps(a[i], b[i]);
            let h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
            let h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            let h = _mm_add_ss(h, _mm_movehdup_ps(h));
            let mut total = _mm_cvtss_f32(h);
            let row = &xs[(r0 + i) * k..(r0 + i + 1) * k];
            for (x, w) in row[steps * 16..].iter().zip(&wr[steps * 16..]) {
                total = x.mul_add(*w, total);
            }
            out[i] = total;
        }
        out
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn dot16(a: &[f16], q: &[f32]) -> f32 {
        let n = a.len().min(q.len());
        let (pa, pq) = (a.as_ptr() as *const u16, q.as_ptr());
        // Four accumulators: each FMA waits on the previous one into the same
        // accumulator, so four chains keep the unit busy across a row.
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 32 <= n {
            for (j, a) in acc.iter_mut().enumerate() {
                let o = i + 8 * j;
                // SAFETY: o + 8 <= i + 32 <= n, and both slices hold at least n
                // elements; f16 is a plain 16-bit value, so eight of them are one
                // unaligned 128-bit load.
                let (x, y) = unsafe {
                    (
                        _mm256_cvtph_ps(_mm_loadu_si128(pa.add(o) as *const __m128i)),
                        _mm256_loadu_ps(pq.add(o)),
                    )
                };
                *a = _mm256_fmadd_ps(x, y, *a);
            }
            i += 32;
        }
        while i + 8 <= n {
            // SAFETY: as above, i + 8 <= n.
            let (x, y) = unsafe {
                (
                    _mm256_cvtph_ps(_mm_loadu_si128(pa.add(i) as *const __m128i)),
                    _mm256_loadu_ps(pq.add(i)),
                )
            };
            acc[0] = _mm256_fmadd_ps(x, y, acc[0]);
            i += 8;
        }
        let s = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
        let h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        let h = _mm_add_ss(h, _mm_movehdup_ps(h));
        let mut total = _mm_cvtss_f32(h);
        for (x, y) in a[i..n].iter().zip(&q[i..n]) {
            total += x.to_f32() * y;
        }
        total
    }
}

/// Many vectors of one dimension in one allocation, row `i` at `data[i*dim..]`: the
/// in-memory form of a project's vectors, scanned linearly at search time. Components
/// are stored as 16-bit floats (see the module's note).
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    dim: usize,
    data: Vec<f16>,
}

impl Matrix {
    pub fn new(dim: usize) -> Matrix {
        Matrix {
            dim,
            data: Vec::new(),
        }
    }

    /// Room for `rows` rows up front: growing a slab of tens of megabytes by doubling
    /// copies it several times and leaves the freed halves behind in the allocator.
    pub fn with_capacity(dim: usize, rows: usize) -> Matrix {
        Matrix {
            dim,
            data: Vec::with_capacity(dim * rows),
        }
    }

    /// Gives back capacity beyond the rows held.
    pub fn shrink(&mut self) {
        self.data.shrink_to_fit();
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Appends a row and returns its index; a row of the wrong length is padded or cut
    /// to `dim` so indices stay aligned with the caller's keys.
    pub fn push(&mut self, v: &[f32]) -> usize {
        let i = self.len();
        let n = v.len().min(self.dim);
        self.data.extend(v[..n].iter().map(|x| f16::from_f32(*x)));
        self.data.resize((i + 1) * self.dim, f16::ZERO);
        i
    }

    /// Appends a row straight from a BLOB written by [`to_blob`], without an
    /// intermediate vector (loading a project decodes thousands of them); `None`, and
    /// nothing appended, when the BLOB is not `dim` components long.
    pub fn push_blob(&mut self, b: &[u8]) -> Option<usize> {
        if b.len() != self.dim * 4 {
            return None;
        }
        let i = self.len();
        let start = self.data.len();
        self.data.resize(start + self.dim, f16::ZERO);
        // Narrowed a block at a time: the slice conversion uses the CPU's F16C
        // instructions where there are some, one component at a time costs a call each.
        let mut buf = [0f32; 64];
        for (out, bytes) in self.data[start..].chunks_mut(64).zip(b.chunks(256)) {
            let wide = &mut buf[..out.len()];
            for (x, c) in wide.iter_mut().zip(bytes.chunks_exact(4)) {
                *x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            out.convert_from_f32_slice(wide);
        }
        Some(i)
    }

    /// Overwrites row `i`; does nothing when `i` is out of range.
    pub fn set(&mut self, i: usize, v: &[f32]) {
        if let Some(row) = self.data.get_mut(i * self.dim..(i + 1) * self.dim) {
            let n = v.len().min(row.len());
            for (r, x) in row.iter_mut().zip(&v[..n]) {
                *r = f16::from_f32(*x);
            }
            row[n..].fill(f16::ZERO);
        }
    }

    /// Removes row `i` by moving the last row into its place (like `Vec::swap_remove`);
    /// the caller moves its key the same way.
    pub fn swap_remove(&mut self, i: usize) {
        let n = self.len();
        if i >= n {
            return;
        }
        let last = n - 1;
        if i != last {
            let (head, tail) = self.data.split_at_mut(last * self.dim);
            head[i * self.dim..(i + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
        }
        self.data.truncate(last * self.dim);
    }

    /// Row `i` widened to 32-bit floats.
    pub fn row(&self, i: usize) -> Option<Vec<f32>> {
        self.data
            .get(i * self.dim..(i + 1) * self.dim)
            .map(|r| r.iter().map(|x| x.to_f32()).collect())
    }

    /// Row `i`'s dot product with `query`.
    pub fn dot_row(&self, i: usize, query: &[f32]) -> Option<f32> {
        self.data
            .get(i * self.dim..(i + 1) * self.dim)
            .map(|r| dot16(r, query))
    }

    /// Every row's similarity to `query`, in row order.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if self.dim == 0 {
            return Vec::new();
        }
        self.data
            .chunks_exact(self.dim)
            .map(|r| dot16(r, query))
            .collect()
    }

    /// The `k` rows most similar to `query` with a score ≥ `min_score`, best first; ties
    /// go to the lower row index so the order is deterministic.
    pub fn top_k(&self, query: &[f32], k: usize, min_score: f32) -> Vec<(usize, f32)> {
        rank(self.scores(query), k, min_score)
    }

    /// The `k` best of `rows` that `keep` accepts, best first (score by `total_cmp`,
    /// ties to the lower index): exactly what filtering every row, sorting and cutting
    /// would answer. One pass over the slab with a bounded heap, so `keep` (a scope
    /// lookup) runs only for rows that would enter the current top `k`, a few hundred
    /// of 20,000.
    pub fn top_k_by(
        &self,
        rows: std::ops::Range<usize>,
        query: &[f32],
        k: usize,
        mut keep: impl FnMut(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        use std::collections::BinaryHeap;
        if k == 0 || self.dim == 0 {
            return Vec::new();
        }
        let rows = rows.start.min(self.len())..rows.end.min(self.len());
        let slab = &self.data[rows.start * self.dim..rows.end * self.dim];
        // The heap's top is the worst entry kept.
        let mut heap: BinaryHeap<Worst> = BinaryHeap::with_capacity(k + 1);
        for (j, r) in slab.chunks_exact(self.dim).enumerate() {
            let w = Worst(dot16(r, query), rows.start + j);
            if heap.len() == k && heap.peek().is_some_and(|top| w >= *top) {
                continue;
            }
            if !keep(w.1) {
                continue;
            }
            if heap.len() == k {
                heap.pop();
            }
            heap.push(w);
        }
        // Ascending "worst" order is best first.
        heap.into_sorted_vec()
            .into_iter()
            .map(|w| (w.1, w.0))
            .collect()
    }
}

/// A ranked row ordered worst-first: a lower score, or an equal one at a higher index,
/// is greater.
#[derive(Clone, Copy)]
struct Worst(f32, usize);

impl PartialEq for Worst {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Worst {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
    }
}

/// The `k` best `(index, score)` of `scores` with score ≥ `min_score`, best first, ties
/// by index. Partial selection first, so ranking 20,000 scores sorts only `k` of them.
pub fn rank(scores: Vec<f32>, k: usize, min_score: f32) -> Vec<(usize, f32)> {
    let mut hits: Vec<(usize, f32)> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s >= min_score && !s.is_nan())
        .collect();
    let order = |a: &(usize, f32), b: &(usize, f32)| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(Ordering::Equal)
            .then(a.0.cmp(&b.0))
    };
    if k == 0 {
        return Vec::new();
    }
    if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, order);
        hits.truncate(k);
    }
    hits.sort_by(order);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_round_trips_little_endian() {
        let v = vec![1.0f32, -0.5, 0.25, f32::MIN_POSITIVE];
        let b = to_blob(&v);
        assert_eq!(&b[..4], &1.0f32.to_le_bytes());
        assert_eq!(&b[4..8], &[0x00, 0x00, 0x00, 0xbf]);
        assert_eq!(from_blob(&b, 4), Some(v));
        assert_eq!(from_blob(&b, 3), None);
        assert_eq!(from_blob(&b[..7], 2), None);
    }

    #[test]
    fn dot_matches_naive_sum() {
        let a: Vec<f32> = (0..389).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..389).map(|i| (i as f32 * 0.11).cos()).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }

    /// A stored row scores within rounding of its 32-bit original, and the vector
    /// instructions agree with the portable loop (odd lengths exercise the tails).
    #[test]
    fn sixteen_bit_rows_score_like_their_originals() {
        for n in [384usize, 389, 15, 1] {
            let mut a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let mut q: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            normalize(&mut a);
            normalize(&mut q);
            let mut m = Matrix::new(n);
            m.push(&a);
            let got = m.dot_row(0, &q).unwrap();
            assert!(
                (got - dot(&a, &q)).abs() < 2e-3,
                "n {n}: {got} vs {}",
                dot(&a, &q)
            );
            let row: Vec<f16> = a.iter().map(|x| f16::from_f32(*x)).collect();
            #[cfg(target_arch = "x86_64")]
            if wide::available() {
                // SAFETY: the features were just checked.
                let fast = unsafe { wide::dot16(&row, &q) };
                assert!((fast - dot16_portable(&row, &q)).abs() < 1e-5);
            }
        }
    }

    /// The kernel's matrix product equals the plain sum for every row count it
    /// splits into blocks (1, 2, 3, 4, 5, 7) and widths with and without a tail.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn wide_products_equal_plain_sums() {
        if !wide::available() {
            return;
        }
        for (rows, n, k) in [
            (1, 5, 16),
            (2, 3, 19),
            (3, 4, 48),
            (4, 2, 7),
            (5, 6, 33),
            (7, 9, 384),
        ] {
            let xs: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 31.0)
                .collect();
            let w: Vec<f32> = (0..n * k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 70.0)
                .collect();
            // SAFETY: the features were just checked.
            let y = unsafe { wide::products(&xs, &w, k) };
            assert_eq!(y.len(), rows * n);
            for r in 0..rows {
                for j in 0..n {
                    let want: f32 = (0..k).map(|i| xs[r * k + i] * w[j * k + i]).sum();
                    let got = y[r * n + j];
                    assert!(
                        (got - want).abs() < 1e-3,
                        "{rows}x{n}x{k} [{r},{j}]: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn normalize_leaves_zero_alone() {
        let mut z = vec![0.0f32; 5];
        normalize(&mut z);
        assert!(z.iter().all(|x| *x == 0.0));
        let mut v = vec![3.0f32, 4.0];
        normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn top_k_is_ordered_filtered_and_deterministic() {
        let mut m = Matrix::new(2);
        // Components a 16-bit float holds exactly, so scores compare exactly.
        for v in [
            [1.0, 0.0],
            [0.0, 1.0],
            [0.625, 0.75],
            [1.0, 0.0],
            [-1.0, 0.0],
        ] {
            m.push(&v);
        }
        let q = [1.0, 0.0];
        assert_eq!(m.top_k(&q, 3, -1.0), vec![(0, 1.0), (3, 1.0), (2, 0.625)]);
        assert_eq!(m.top_k(&q, 10, 0.5), vec![(0, 1.0), (3, 1.0), (2, 0.625)]);
        assert_eq!(m.top_k(&q, 0, 0.0), vec![]);
    }

    #[test]
    fn top_k_by_equals_filter_sort_cut() {
        let mut m = Matrix::new(3);
        for i in 0..500u32 {
            // Many exact ties: scores repeat every 37 rows.
            let a = ((i % 37) as f32 * 0.7).sin();
            let mut v = [a, (1.0 - a * a).max(0.0).sqrt(), 0.0];
            normalize(&mut v);
            m.push(&v);
        }
        let q = [0.6, 0.8, 0.0];
        for (k, range) in [
            (1, 0..500),
            (10, 0..500),
            (100, 50..450),
            (600, 0..500),
            (7, 490..600),
        ] {
            let keep = |i: usize| i % 3 != 1;
            let want: Vec<(usize, f32)> = {
                let r = range.start.min(500)..range.end.min(500);
                let mut all: Vec<(usize, f32)> = r
                    .filter(|&i| keep(i))
                    .map(|i| (i, m.dot_row(i, &q).unwrap()))
                    .collect();
                all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                all.truncate(k);
                all
            };
            assert_eq!(m.top_k_by(range, &q, k, keep), want, "k {k}");
        }
        assert!(m.top_k_by(0..500, &q, 0, |_| true).is_empty());
    }

    #[test]
    fn matrix_swap_remove_and_set() {
        let mut m = Matrix::new(2);
        m.push(&[1.0, 1.0]);
        m.push(&[2.0, 2.0]);
        m.push(&[3.0, 3.0]);
        m.swap_remove(0);
        assert_eq!(m.len(), 2);
        assert_eq!(m.row(0), Some(vec![3.0, 3.0]));
        m.set(1, &[5.0]);
        assert_eq!(m.row(1), Some(vec![5.0, 0.0]));
        m.swap_remove(7);
        assert_eq!(m.len(), 2);
        assert_eq!(m.push_blob(&to_blob(&[7.0, 8.0])), Some(2));
        assert_eq!(m.push_blob(&to_blob(&[7.0])), None);
        assert_eq!(m.row(2), Some(vec![7.0, 8.0]));
        assert_eq!(m.len(), 3);
    }
}
