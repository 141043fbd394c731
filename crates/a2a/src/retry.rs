//! One retry policy for everything that repeats an HTTP request: the client's calls
//! (and its stream reconnections) and the push worker's deliveries.
//!
//! A policy says three things:
//!
//! - **How long to wait.** After the `n`-th failed attempt (`n` counts from 1) the next
//!   one waits a delay drawn uniformly from `[0, min(max_backoff, initial_backoff ×
//!   2^(n−1))]`. Drawing from the whole interval ("full jitter") rather than adding a
//!   little noise to the exponential value spreads the retries of many callers that
//!   failed together instead of sending them back in waves. A `Retry-After` the peer
//!   sent replaces the drawn delay, capped at `max_backoff` so that a peer cannot park a
//!   caller for longer than the policy allows.
//! - **How often.** `max_attempts` counts every attempt, the first included.
//! - **Which failures.** [`RetryPolicy::is_transient`]: a request that never left
//!   (the connection could not be made) and a 429 (the peer refused it without doing
//!   anything) are always worth another attempt; a request whose fate is unknown (a
//!   timeout or a broken connection once it was sent) and the statuses of a busy or
//!   broken peer (408, 5xx) only when repeating the request is harmless
//!   ([`Repeat::Harmless`]). Any other status is the peer's answer and is final.

use std::time::Duration;

use rand::Rng;

/// Exponential backoff with full jitter, a cap, and a bound on attempts; see the
/// [module documentation](self) for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included; 0 and 1 both mean "never retry".
    pub max_attempts: u32,
    /// The ceiling of the wait after the first failure; it doubles with every failure.
    pub initial_backoff: Duration,
    /// The largest wait between two attempts (it also caps `Retry-After`).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, waits from up to 100 ms growing to at most 2 s: the client's
    /// default. The push worker has its own (see `PushOptions`).
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        }
    }
}

/// How an attempt failed, as far as retrying it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The connection could not be made: the request never reached the peer.
    NotSent,
    /// The request may have reached the peer, but no complete answer came back (a
    /// timeout, a connection reset mid-exchange).
    Lost,
    /// The peer answered with this HTTP status, which is not a success.
    Status(u16),
}

/// Whether sending a request twice can do something sending it once would not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Reads, idempotent operations, calls carrying an idempotency key, and push
    /// deliveries (receivers see every event at least once anyway).
    Harmless,
    /// Everything else: a `SendMessage` without an idempotency key could start a
    /// second task.
    Unsafe,
}

impl RetryPolicy {
    /// Whether `failure` is worth another attempt of a request that `repeat`
    /// describes (ignoring how many attempts were made; see [`RetryPolicy::next_delay`]).
    pub fn is_transient(failure: Failure, repeat: Repeat) -> bool {
        match failure {
            Failure::NotSent | Failure::Status(429) => true,
            Failure::Lost => repeat == Repeat::Harmless,
            Failure::Status(status) => repeat == Repeat::Harmless && (status == 408 || (500..=599).contains(&status)),
        }
    }

    /// Whether another attempt may follow the `attempt`-th one (counting from 1).
    pub fn may_retry(&self, attempt: u32) -> bool {
        attempt < self.max_attempts.max(1)
    }

    /// The upper bound of the wait after the `attempt`-th failure:
    /// `min(max_backoff, initial_backoff × 2^(attempt−1))`, without overflow.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1);
        match 2u32.checked_pow(doublings).and_then(|f| self.initial_backoff.checked_mul(f)) {
            Some(delay) => delay.min(self.max_backoff),
            None => self.max_backoff,
        }
    }

    /// A wait drawn uniformly from `[0, ceiling(attempt)]`.
    pub fn backoff(&self, attempt: u32, rng: &mut impl Rng) -> Duration {
        let ceiling = u64::try_from(self.ceiling(attempt).as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rng.random_range(0..=ceiling))
    }

    /// The wait a peer asked for with `Retry-After`, capped at `max_backoff`.
    pub fn retry_after(&self, asked: Duration) -> Duration {
        asked.min(self.max_backoff)
    }

    /// The whole decision after the `attempt`-th attempt failed with `failure`: the
    /// wait before the next attempt, or `None` when there is to be none (the failure
    /// is final, or the attempts are used up). `retry_after` is what the peer asked
    /// for, if anything.
    pub fn next_delay(
        &self,
        attempt: u32,
        failure: Failure,
        repeat: Repeat,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        if !Self::is_transient(failure, repeat) || !self.may_retry(attempt) {
            return None;
        }
        Some(match retry_after {
            Some(asked) => self.retry_after(asked),
            None => self.backoff(attempt, &mut rand::rng()),
        })
    }
}

/// `Retry-After` in its delta-seconds form. The HTTP-date form is ignored (the backoff
/// applies instead): it needs clocks the two sides may not share.
pub fn retry_after_seconds(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim();
    value.parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 8,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1_000),
        }
    }

    #[test]
    fn backoff_is_full_jitter_capped_exponential() {
        let policy = policy();
        assert_eq!(policy.ceiling(1), Duration::from_millis(100));
        assert_eq!(policy.ceiling(2), Duration::from_millis(200));
        assert_eq!(policy.ceiling(4), Duration::from_millis(800));
        assert_eq!(policy.ceiling(5), Duration::from_millis(1_000), "capped");
        assert_eq!(policy.ceiling(200), Duration::from_millis(1_000), "no overflow");
        let mut rng = rand::rng();
        for attempt in 1..10 {
            for _ in 0..50 {
                assert!(policy.backoff(attempt, &mut rng) <= policy.ceiling(attempt));
            }
        }
    }

    #[test]
    fn attempts_are_counted_with_the_first_and_zero_means_one() {
        let policy = policy();
        assert!(policy.may_retry(7));
        assert!(!policy.may_retry(8));
        let once = RetryPolicy { max_attempts: 0, ..policy };
        assert!(!once.may_retry(1));
        assert_eq!(once.next_delay(1, Failure::NotSent, Repeat::Harmless, None), None);
    }

    #[test]
    fn which_failures_are_transient() {
        use Failure::*;
        use Repeat::*;
        for repeat in [Harmless, Unsafe] {
            assert!(RetryPolicy::is_transient(NotSent, repeat), "never sent");
            assert!(RetryPolicy::is_transient(Status(429), repeat), "refused unprocessed");
            for status in [400, 401, 403, 404, 405, 409, 413, 415] {
                assert!(!RetryPolicy::is_transient(Status(status), repeat), "{status} is an answer");
            }
        }
        for status in [408, 500, 502, 503, 504] {
            assert!(RetryPolicy::is_transient(Status(status), Harmless), "{status}");
            assert!(!RetryPolicy::is_transient(Status(status), Unsafe), "{status} may have been processed");
        }
        assert!(RetryPolicy::is_transient(Lost, Harmless));
        assert!(!RetryPolicy::is_transient(Lost, Unsafe));
    }

    #[test]
    fn retry_after_replaces_the_backoff_and_is_capped() {
        let policy = policy();
        let asked = Some(Duration::from_secs(3_600));
        assert_eq!(policy.next_delay(1, Failure::Status(429), Repeat::Unsafe, asked), Some(Duration::from_secs(1)));
        let small = Some(Duration::from_millis(10));
        assert_eq!(policy.next_delay(1, Failure::Status(503), Repeat::Harmless, small), small);
        assert_eq!(policy.next_delay(1, Failure::Status(404), Repeat::Harmless, small), None);
    }

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("7"));
        assert_eq!(retry_after_seconds(&headers), Some(Duration::from_secs(7)));
        headers.insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after_seconds(&headers), None);
    }
}
