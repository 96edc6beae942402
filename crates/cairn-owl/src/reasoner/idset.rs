//! A set of integer ids by open addressing (linear probing, no deletion): the
//! reasoner's subsumer and link sets, smaller and faster than a `HashSet` for dense
//! integer keys, and iterable for incremental re-checks.
//!
//! Knows nothing of ontologies.

/// Keys the set can hold; `EMPTY` marks a free slot and is never a key.
pub(crate) trait Key: Copy + Eq {
    const EMPTY: Self;
    fn hash(self) -> u64;
}

impl Key for u32 {
    const EMPTY: u32 = u32::MAX;
    #[inline]
    fn hash(self) -> u64 {
        u64::from(self).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl Key for u64 {
    const EMPTY: u64 = u64::MAX;
    #[inline]
    fn hash(self) -> u64 {
        (self ^ (self >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
    }
}

/// The set.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdSet<K: Key> {
    slots: Vec<K>,
    len: usize,
}

impl<K: Key> IdSet<K> {
    /// Number of keys.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn slot(&self, k: K) -> usize {
        // The table's size is a power of two; the high bits of the hash are the best mixed.
        let bits = self.slots.len().trailing_zeros();
        (k.hash() >> (64 - bits)) as usize
    }

    /// True when `k` is in the set.
    #[inline]
    pub(crate) fn contains(&self, k: K) -> bool {
        if self.len == 0 {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(k);
        loop {
            let s = self.slots[i];
            if s == k {
                return true;
            }
            if s == K::EMPTY {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `k`; false when it was already there. `k` must not be `K::EMPTY`.
    #[inline]
    pub(crate) fn insert(&mut self, k: K) -> bool {
        debug_assert!(k != K::EMPTY);
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(k);
        loop {
            let s = self.slots[i];
            if s == k {
                return false;
            }
            if s == K::EMPTY {
                self.slots[i] = k;
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, vec![K::EMPTY; cap]);
        self.len = 0;
        for k in old {
            if k != K::EMPTY {
                self.insert(k);
            }
        }
    }

    /// The keys, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.slots.iter().copied().filter(|k| *k != K::EMPTY)
    }
}

/// A fast hasher for small integer keys (the multiply-rotate scheme of rustc's
/// FxHash), for the few maps the reasoner keys by id pairs.
#[derive(Clone, Copy, Default)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.add(u64::from(*b));
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    #[inline]
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A `HashMap` with [`Fx`].
pub(crate) type FxMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn behaves_like_a_hash_set() {
        let mut a: IdSet<u32> = IdSet::default();
        let mut b = HashSet::new();
        let mut rng = fastrand::Rng::with_seed(12345);
        for _ in 0..20_000 {
            let k = rng.u32(..5000);
            assert_eq!(a.insert(k), b.insert(k));
            assert!(a.contains(k));
        }
        assert_eq!(a.len(), b.len());
        let mut keys: Vec<u32> = a.iter().collect();
        keys.sort();
        let mut want: Vec<u32> = b.into_iter().collect();
        want.sort();
        assert_eq!(keys, want);
        assert!(!a.contains(7000));
        let mut c: IdSet<u64> = IdSet::default();
        assert!(c.insert(1 << 40));
        assert!(!c.insert(1 << 40));
        assert!(c.contains(1 << 40) && !c.contains(3));
    }
}
