//! The bounds of one run: turns, tokens, cost and wall clock. Pure: the loop hands in what it
//! spent, [`Bounds::exceeded`] answers with the reason the run ends, tested as a table.

use std::time::Duration;

use tackle_llm::catalog::Prices;
use tackle_protocol::Usage;

/// Each `None` is unbounded. Counted over one run (a resume starts afresh).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounds {
    pub max_turns: Option<u32>,
    /// Input and output tokens together, cached input included.
    pub max_tokens: Option<u64>,
    /// US dollars at the model's list prices; refused at start when the prices are unknown.
    pub max_cost_usd: Option<f64>,
    pub max_duration: Option<Duration>,
}

/// What a run has spent so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub turns: u32,
    /// The run's own model turns.
    pub usage: Usage,
    /// The cost of `usage` at the run's model's prices, when they are known.
    pub cost_usd: Option<f64>,
    pub elapsed: Duration,
    /// The tokens of the agentic subtasks the run's calls ran (`crate::agentic`) on the small
    /// model. Kept apart from `usage` because they are priced at another model's prices.
    pub subtask_usage: Usage,
    /// Their cost at the small model's prices; a small model without prices (a local server)
    /// adds tokens and no cost, and `--max-cost` is refused at start for one.
    pub subtask_cost_usd: f64,
}

impl Spent {
    /// Every token the run spent: its own turns and its subtasks'.
    pub fn total_usage(&self) -> Usage {
        let mut total = self.usage;
        crate::conversation::add_usage(&mut total, &self.subtask_usage);
        total
    }

    /// The run's cost with its subtasks', when its own model's prices are known.
    pub fn total_cost(&self) -> Option<f64> {
        self.cost_usd.map(|c| c + self.subtask_cost_usd)
    }
}

impl Bounds {
    /// The reason the run must end before another model turn, if one is reached.
    pub fn exceeded(&self, spent: &Spent) -> Option<String> {
        if let Some(max) = self.max_turns
            && spent.turns >= max
        {
            return Some(format!(
                "the run reached its limit of {max} model turn(s) (--max-turns)"
            ));
        }
        let tokens = tokens(&spent.total_usage());
        if let Some(max) = self.max_tokens
            && tokens >= max
        {
            return Some(format!(
                "the run used {tokens} tokens, its budget is {max} (--max-tokens)"
            ));
        }
        if let (Some(max), Some(cost)) = (self.max_cost_usd, spent.total_cost())
            && cost >= max
        {
            return Some(format!(
                "the run cost ${cost:.4}, its budget is ${max:.4} (--max-cost)"
            ));
        }
        if let Some(max) = self.max_duration
            && spent.elapsed >= max
        {
            return Some(wall_clock_reason(max));
        }
        None
    }
}

pub fn wall_clock_reason(max: Duration) -> String {
    format!(
        "the run reached its wall-clock limit of {}s (--max-duration)",
        max.as_secs_f64()
    )
}

/// Every token of a usage: input (cached or not) and output.
pub fn tokens(usage: &Usage) -> u64 {
    usage.prompt_tokens() + usage.output_tokens
}

/// The list price of `usage`.
pub fn cost(usage: &Usage, prices: &Prices) -> f64 {
    let m = 1_000_000.0;
    usage.input_tokens as f64 * prices.input / m
        + usage.output_tokens as f64 * prices.output / m
        + usage.cache_read_tokens as f64 * prices.cache_read / m
        + usage.cache_write_tokens as f64 * prices.cache_write / m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn each_bound_ends_the_run_with_its_reason() {
        let all = Bounds {
            max_turns: Some(3),
            max_tokens: Some(1000),
            max_cost_usd: Some(0.5),
            max_duration: Some(Duration::from_secs(60)),
        };
        let within = Spent {
            turns: 2,
            usage: usage(500, 100),
            cost_usd: Some(0.1),
            elapsed: Duration::from_secs(5),
            ..Spent::default()
        };
        let cases: &[(Spent, Option<&str>)] = &[
            (within, None),
            (Spent { turns: 3, ..within }, Some("--max-turns")),
            (
                Spent {
                    usage: usage(900, 100),
                    ..within
                },
                Some("--max-tokens"),
            ),
            (
                Spent {
                    cost_usd: Some(0.5),
                    ..within
                },
                Some("--max-cost"),
            ),
            // A subtask's tokens and cost count against the run's bounds.
            (
                Spent {
                    subtask_usage: usage(300, 100),
                    ..within
                },
                Some("--max-tokens"),
            ),
            (
                Spent {
                    subtask_cost_usd: 0.4,
                    ..within
                },
                Some("--max-cost"),
            ),
            (
                Spent {
                    elapsed: Duration::from_secs(61),
                    ..within
                },
                Some("--max-duration"),
            ),
        ];
        for (spent, want) in cases {
            let got = all.exceeded(spent);
            match want {
                None => assert_eq!(got, None, "{spent:?}"),
                Some(flag) => assert!(got.as_deref().is_some_and(|r| r.contains(flag)), "{got:?}"),
            }
        }
        assert_eq!(Bounds::default().exceeded(&Spent::default()), None);
    }

    #[test]
    fn cost_is_per_million_tokens_of_each_kind() {
        let prices = Prices {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        };
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 0,
            reasoning_tokens: None,
        };
        assert!((cost(&u, &prices) - (3.0 + 1.5 + 0.3)).abs() < 1e-9);
    }
}
