//! Shared measurement helpers for tackle's benchmarks (`crates/bench/benches/`), each of which
//! runs tackle beside its peer in one process run and prints the ratio.

pub mod bounded;
pub mod corpus;
pub mod direct;
pub mod layers;
pub mod llama_server;
pub mod local_tasks;
pub mod loop_turns;
pub mod reaped;
pub mod release;
pub mod responses_mock;
pub mod usage_proxy;
pub mod user_env;

use std::path::PathBuf;
use std::time::Duration;

/// Where cargo puts this workspace's builds: `CARGO_TARGET_DIR` when set (cargo honours it for
/// the release build a benchmark asks for), else the workspace's `target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
    }
}

/// Median, mean and 99th percentile of a set of timings.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub median: Duration,
    pub mean: Duration,
    pub p99: Duration,
}

impl Stats {
    /// Sorts `samples` in place. Panics on an empty slice: a benchmark with no samples is a bug.
    pub fn of(samples: &mut [Duration]) -> Self {
        assert!(!samples.is_empty(), "no samples to summarize");
        samples.sort();
        let sum: Duration = samples.iter().sum();
        Self {
            median: samples[samples.len() / 2],
            mean: sum / samples.len() as u32,
            p99: samples[samples.len() * 99 / 100],
        }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {:>9.1?}  mean {:>9.1?}  p99 {:>9.1?}",
            self.median, self.mean, self.p99
        )
    }
}

/// `a / b` as a plain number.
pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_known_samples() {
        let mut v: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        let s = Stats::of(&mut v);
        assert_eq!(s.median, Duration::from_micros(51));
        assert_eq!(s.p99, Duration::from_micros(100));
        assert_eq!(s.mean, Duration::from_nanos(50_500));
        assert_eq!(
            ratio(Duration::from_millis(3), Duration::from_millis(2)),
            1.5
        );
    }
}
