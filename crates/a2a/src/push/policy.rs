//! When a failed delivery is tried again, and when it is given up on.

use std::time::Duration;

use rand::Rng;

/// Exponential backoff with full jitter, a cap, and a bound on attempts.
///
/// After the `n`-th failed attempt (`n` counts from 1) the next attempt waits a delay
/// drawn uniformly from
///
/// ```text
/// [0, min(max_delay, base_delay × 2^(n−1))]
/// ```
///
/// Drawing from the whole interval ("full jitter") rather than adding a little noise to
/// the exponential value spreads the retries of many deliveries that failed together
/// (a receiver that was down for a minute) instead of sending them back in waves.
/// A `Retry-After` answer replaces the drawn delay (see [`RetryPolicy::retry_after`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The number of attempts, the first included, before a delivery goes to the dead
    /// letters. Zero is treated as one.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// The upper bound of the delay after the `attempt`-th failure:
    /// `min(max_delay, base_delay × 2^(attempt−1))`, without overflow.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1);
        let factor = 2u32.checked_pow(doublings);
        match factor.and_then(|f| self.base_delay.checked_mul(f)) {
            Some(delay) => delay.min(self.max_delay),
            None => self.max_delay,
        }
    }

    /// A delay drawn uniformly from `[0, ceiling(attempt)]`.
    pub fn backoff(&self, attempt: u32, rng: &mut impl Rng) -> Duration {
        let ceiling = u64::try_from(self.ceiling(attempt).as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rng.random_range(0..=ceiling))
    }

    /// The delay a receiver asked for with `Retry-After`, capped at `max_delay` so that a
    /// receiver cannot park a delivery for longer than the policy allows.
    pub fn retry_after(&self, asked: Duration) -> Duration {
        asked.min(self.max_delay)
    }

    /// Whether a delivery whose `attempt`-th attempt just failed may be tried again.
    pub fn may_retry(&self, attempt: u32) -> bool {
        attempt < self.max_attempts.max(1)
    }
}
