//! When to try a request again, and after how long.
//!
//! Pure: the caller reports what the failed attempt returned, the time spent so far and a jitter
//! sample, and gets a decision; it owns the clock and the sleep. The rules follow what the
//! vendors' own clients do: the server's `x-should-retry` decides when present; otherwise
//! transport failures, 408, 409, 429 and 5xx are retried; the delay is the server's
//! (`retry-after-ms`, then `retry-after` in seconds or as an HTTP date, capped) or a jittered
//! exponential backoff. A spend-limit or insufficient-quota 429 is never retried, whatever the
//! headers say: waiting does not refill a budget.

use std::time::{Duration, SystemTime};

use http::HeaderMap;

/// Bounds of the retry loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The backoff before the second attempt; it doubles per attempt.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A server-provided delay longer than this is cut to it.
    pub max_server_delay: Duration,
    /// No retry is started that would begin after this much time since the first attempt.
    pub deadline: Duration,
}

impl RetryPolicy {
    /// The vendors' client defaults: 0.5 s doubling to 8 s, server delays capped at 120 s.
    pub fn standard(max_attempts: u32, deadline: Duration) -> Self {
        Self {
            max_attempts,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_server_delay: Duration::from_secs(120),
            deadline,
        }
    }
}

/// What the server said about retrying, read from the response headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryHints {
    /// `x-should-retry: true|false`.
    pub should_retry: Option<bool>,
    /// `retry-after-ms`, else `retry-after` (seconds or an HTTP date).
    pub delay: Option<Duration>,
}

impl RetryHints {
    /// Reads the hints; malformed values are ignored. `now` turns an HTTP date into a delay.
    pub fn from_headers(headers: &HeaderMap, now: SystemTime) -> Self {
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
        };
        let should_retry = match text("x-should-retry") {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let millis = text("retry-after-ms")
            .and_then(|v| v.parse::<f64>().ok())
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        let after = || {
            let value = text("retry-after")?;
            if let Ok(seconds) = value.parse::<f64>() {
                return Duration::try_from_secs_f64(seconds).ok();
            }
            let date = httpdate::parse_http_date(value).ok()?;
            Some(date.duration_since(now).unwrap_or(Duration::ZERO))
        };
        Self {
            should_retry,
            delay: millis.or_else(after),
        }
    }
}

/// What a failed attempt returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The HTTP status; `None` when no response arrived (connect, TLS or reset failures).
    pub status: Option<u16>,
    pub hints: RetryHints,
    /// The body said the account's spend limit or quota is used up.
    pub quota_exhausted: bool,
}

/// Why no further attempt is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The status is not one that a later attempt can change.
    NotRetryable,
    QuotaExhausted,
    /// `x-should-retry: false`.
    ServerSaidNo,
    AttemptsExhausted {
        attempts: u32,
    },
    /// The next attempt would start after the overall deadline.
    DeadlineReached,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    RetryAfter(Duration),
    GiveUp(GiveUp),
}

impl RetryPolicy {
    /// Decides after attempt number `attempt` (1 for the first) failed as `failure`, `elapsed`
    /// after the first attempt started. `jitter` is a uniform sample in `[0, 1)`: the backoff is
    /// shortened by up to a quarter so clients that failed together do not retry together.
    pub fn decide(
        &self,
        attempt: u32,
        failure: &Attempt,
        elapsed: Duration,
        jitter: f64,
    ) -> RetryDecision {
        if failure.quota_exhausted {
            return RetryDecision::GiveUp(GiveUp::QuotaExhausted);
        }
        let retryable = match failure.hints.should_retry {
            Some(false) => return RetryDecision::GiveUp(GiveUp::ServerSaidNo),
            Some(true) => true,
            None => failure
                .status
                .is_none_or(|s| matches!(s, 408 | 409 | 429 | 500..=599)),
        };
        if !retryable {
            return RetryDecision::GiveUp(GiveUp::NotRetryable);
        }
        if attempt >= self.max_attempts {
            return RetryDecision::GiveUp(GiveUp::AttemptsExhausted { attempts: attempt });
        }
        let delay = match failure.hints.delay {
            Some(server) => server.min(self.max_server_delay),
            None => {
                let doubling = 2u32.saturating_pow(attempt.saturating_sub(1));
                let backoff = self
                    .initial_backoff
                    .saturating_mul(doubling)
                    .min(self.max_backoff);
                backoff.mul_f64(1.0 - 0.25 * jitter.clamp(0.0, 1.0))
            }
        };
        if elapsed.saturating_add(delay) > self.deadline {
            return RetryDecision::GiveUp(GiveUp::DeadlineReached);
        }
        RetryDecision::RetryAfter(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn hints_are_read_from_headers() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        let ms = Duration::from_millis;
        type Headers = &'static [(&'static str, &'static str)];
        let cases: &[(Headers, Option<bool>, Option<Duration>)] = &[
            (&[], None, None),
            (&[("retry-after", "3")], None, Some(ms(3000))),
            (&[("retry-after", "1.5")], None, Some(ms(1500))),
            (
                &[("retry-after", "Wed, 21 Oct 2026 07:28:10 GMT")],
                None,
                Some(ms(10_000)),
            ),
            (
                &[("retry-after", "Wed, 21 Oct 2026 07:27:00 GMT")],
                None,
                Some(Duration::ZERO),
            ),
            (&[("retry-after", "soon")], None, None),
            (&[("retry-after", "-4")], None, None),
            (&[("retry-after-ms", "250")], None, Some(ms(250))),
            (
                &[("retry-after-ms", "250"), ("retry-after", "9")],
                None,
                Some(ms(250)),
            ),
            (
                &[("retry-after-ms", "x"), ("retry-after", "9")],
                None,
                Some(ms(9000)),
            ),
            (&[("x-should-retry", "true")], Some(true), None),
            (&[("x-should-retry", "false")], Some(false), None),
            (&[("x-should-retry", "maybe")], None, None),
        ];
        for (pairs, should_retry, delay) in cases {
            let hints = RetryHints::from_headers(&headers(pairs), now);
            assert_eq!(hints.should_retry, *should_retry, "{pairs:?}");
            assert_eq!(hints.delay, *delay, "{pairs:?}");
        }
    }

    #[test]
    fn decisions_as_a_table() {
        let policy = RetryPolicy::standard(4, Duration::from_secs(60));
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        let status = |code: u16| Attempt {
            status: Some(code),
            hints: RetryHints::default(),
            quota_exhausted: false,
        };
        let with = |code: u16, should_retry: Option<bool>, delay: Option<Duration>| Attempt {
            status: Some(code),
            hints: RetryHints {
                should_retry,
                delay,
            },
            quota_exhausted: false,
        };
        let quota = Attempt {
            quota_exhausted: true,
            ..with(429, Some(true), Some(s(1)))
        };
        let transport = Attempt {
            status: None,
            hints: RetryHints::default(),
            quota_exhausted: false,
        };
        use RetryDecision::{GiveUp as No, RetryAfter as After};
        #[rustfmt::skip]
        let cases: Vec<(&str, u32, Attempt, Duration, f64, RetryDecision)> = vec![
            ("429 without hints backs off 0.5 s", 1, status(429), s(0), 0.0, After(ms(500))),
            ("backoff doubles", 2, status(529), s(0), 0.0, After(ms(1000))),
            ("backoff doubles again", 3, status(503), s(0), 0.0, After(ms(2000))),
            ("jitter shortens by up to a quarter", 1, status(500), s(0), 0.999_999, After(ms(500).mul_f64(1.0 - 0.25 * 0.999_999))),
            ("408 and 409 are retried", 1, status(408), s(0), 0.0, After(ms(500))),
            ("conflict", 1, status(409), s(0), 0.0, After(ms(500))),
            ("transport failures are retried", 1, transport, s(0), 0.0, After(ms(500))),
            ("server delay wins over backoff", 1, with(429, None, Some(s(3))), s(0), 0.5, After(s(3))),
            ("server delay is capped", 1, with(429, None, Some(s(3600))), s(0), 0.0, No(GiveUp::DeadlineReached)),
            ("400 is final", 1, status(400), s(0), 0.0, No(GiveUp::NotRetryable)),
            ("401 is final", 1, status(401), s(0), 0.0, No(GiveUp::NotRetryable)),
            ("x-should-retry true retries a 400", 1, with(400, Some(true), None), s(0), 0.0, After(ms(500))),
            ("x-should-retry false stops a 529", 1, with(529, Some(false), None), s(0), 0.0, No(GiveUp::ServerSaidNo)),
            ("spend limit is never retried", 1, quota, s(0), 0.0, No(GiveUp::QuotaExhausted)),
            ("attempts run out", 4, status(529), s(0), 0.0, No(GiveUp::AttemptsExhausted { attempts: 4 })),
            ("deadline stops a retry that would start late", 1, with(429, None, Some(s(10))), s(55), 0.0, No(GiveUp::DeadlineReached)),
            ("a retry that fits the deadline", 1, with(429, None, Some(s(5))), s(55), 0.0, After(s(5))),
        ];
        for (name, attempt, failure, elapsed, jitter, want) in cases {
            assert_eq!(
                policy.decide(attempt, &failure, elapsed, jitter),
                want,
                "{name}"
            );
        }
        let capped = RetryPolicy {
            deadline: Duration::from_secs(600),
            ..policy
        };
        assert_eq!(
            capped.decide(1, &with(429, None, Some(s(3600))), s(0), 0.0),
            After(s(120)),
            "a long server delay is cut to the cap"
        );
        assert_eq!(
            policy.decide(1000, &status(500), s(0), 0.0),
            No(GiveUp::AttemptsExhausted { attempts: 1000 })
        );
        let many = RetryPolicy {
            max_attempts: 100,
            ..capped
        };
        assert_eq!(
            many.decide(40, &status(500), s(0), 0.0),
            After(s(8)),
            "backoff stops at its maximum without overflow"
        );
    }
}
