//! A mergeable log-linear histogram of durations in nanoseconds, for percentiles without
//! keeping samples. Values below 64 ns are exact; above, each power of two is split into 32
//! buckets, so a reported percentile is within about 1.6% of the true sample (we report the
//! bucket's midpoint, clamped to the exact min and max).

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS; // 32

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    min: u64,
    max: u64,
    sum: u128,
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS + 1
    let shift = e - SUB_BITS;
    let mant = (v >> shift) & (SUB - 1);
    ((e - SUB_BITS) as u64 * SUB + mant + SUB) as usize
}

/// Smallest and largest value in a bucket.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        return (i, i);
    }
    let e = (i - SUB) / SUB + SUB_BITS as u64;
    let mant = (i - SUB) % SUB;
    let shift = e - SUB_BITS as u64;
    let lo = (SUB + mant) << shift;
    let hi = lo + (1u64 << shift) - 1;
    (lo, hi)
}

impl Histogram {
    pub fn new() -> Self {
        Histogram::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.n += 1;
        self.sum += v as u128;
    }

    pub fn merge(&mut self, o: &Histogram) {
        if o.n == 0 {
            return;
        }
        if o.counts.len() > self.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.min = if self.n == 0 { o.min } else { self.min.min(o.min) };
        self.max = self.max.max(o.max);
        self.n += o.n;
        self.sum += o.sum;
    }

    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn sum(&self) -> u128 {
        self.sum
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Counts regrouped under fixed upper bounds (nanoseconds, ascending): `bounds.len() + 1`
    /// buckets, the last one open. Each fine bucket goes where its midpoint falls.
    pub fn regroup(&self, bounds_ns: &[u64]) -> Vec<u64> {
        let mut out = vec![0; bounds_ns.len() + 1];
        if self.n == 0 {
            return Vec::new();
        }
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let (lo, hi) = bounds(i);
            let mid = lo + (hi - lo) / 2;
            let k = bounds_ns.partition_point(|&b| b < mid);
            out[k] += c;
        }
        out
    }

    /// The value at quantile `q` (0..=1), nearest-rank.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max;
        }
        if q <= 0.0 {
            return self.min;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return (lo + (hi - lo) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous() {
        let mut prev_hi = None;
        for i in 0..1500 {
            let (lo, hi) = bounds(i);
            if let Some(p) = prev_hi {
                assert_eq!(lo, p + 1, "gap before bucket {i}");
            }
            assert_eq!(bucket(lo), i);
            assert_eq!(bucket(hi), i);
            prev_hi = Some(hi);
        }
    }

    #[test]
    fn quantiles_close_to_exact() {
        let mut h = Histogram::new();
        let vals: Vec<u64> = (1..=10_000u64).map(|i| i * 997).collect();
        for &v in &vals {
            h.record(v);
        }
        for q in [0.5, 0.9, 0.99] {
            let exact = vals[((q * vals.len() as f64).ceil() as usize) - 1] as f64;
            let got = h.quantile(q) as f64;
            assert!((got - exact).abs() / exact < 0.02, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1.0), 9_970_000);
        assert_eq!(h.quantile(0.0), 997);
    }

    #[test]
    fn regroup_keeps_every_count() {
        let mut h = Histogram::new();
        for v in [500u64, 2_000, 2_000, 50_000, 5_000_000_000, 20_000_000_000] {
            h.record(v);
        }
        let g = h.regroup(&[1_000, 10_000, 1_000_000_000]);
        assert_eq!(g, vec![1, 2, 1, 2]);
        assert!(Histogram::new().regroup(&[1]).is_empty());
    }

    #[test]
    fn merge_equals_single() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in 0..5000u64 {
            let x = v * v;
            if v % 2 == 0 {
                a.record(x);
            } else {
                b.record(x);
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }
}
