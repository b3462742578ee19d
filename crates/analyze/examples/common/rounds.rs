//! Shared by the benchmark examples: configurations timed in interleaved rounds, medians.

use std::time::Instant;

/// Time `run(i)` for each of `n` configurations, `rounds` times with the configurations
/// interleaved, after one discarded round (it warms the page cache and the allocator); the
/// median seconds of each.
pub fn medians(n: usize, rounds: usize, mut run: impl FnMut(usize)) -> Vec<f64> {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
    for round in 0..=rounds {
        for (i, t) in times.iter_mut().enumerate() {
            let start = Instant::now();
            run(i);
            if round > 0 {
                t.push(start.elapsed().as_secs_f64());
            }
        }
    }
    times
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0)
        })
        .collect()
}
