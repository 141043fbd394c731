//! Open file descriptors: the process's limit on them, and the connection cap that fits
//! under it.
//!
//! Every connection holds a descriptor. A server whose connection limit is above what
//! the process may open runs out of descriptors first: it can then neither accept a
//! connection to refuse it (clients wait instead of getting `503`) nor open anything
//! else (a database file, a push delivery). So [`crate::server::A2aServer::serve`]
//! caps the connections of each listener at what the soft `RLIMIT_NOFILE` leaves after
//! [`RESERVED_DESCRIPTORS`], shared between its listeners, each of which may also be
//! refusing a few connections at once; and [`raise_open_files_limit`] lets a program
//! raise that soft limit to its hard one first (`agentproto serve` does, at start).

/// Descriptors kept for everything but client connections: standard streams, the
/// listening sockets, the runtime's own (its poller, wake-ups, the signal pipe), the
/// store (SQLite's database, journal and shared-memory files for each of its
/// connections; a PostgreSQL pool of 16 and its listening connection), push
/// deliveries' connections and name lookups.
pub const RESERVED_DESCRIPTORS: u64 = 128;

/// The highest soft limit [`raise_open_files_limit`] asks for (Linux's default ceiling,
/// `fs.nr_open`), when the hard limit is higher or unlimited.
const HIGHEST: u64 = 1 << 20;

/// The soft limit on open files in force (`None`: unlimited, or not known on this
/// platform).
pub fn open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the soft limit on open files to the hard limit (at most 2^20), and returns
/// the soft limit now in force. A process may always do this; it is not done for you
/// because the limit is the whole process's, not the server's.
pub fn raise_open_files_limit() -> std::io::Result<Option<u64>> {
    #[cfg(unix)]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let now = getrlimit(Resource::Nofile);
        let target = now.maximum.map_or(HIGHEST, |hard| hard.min(HIGHEST));
        if now.current.is_some_and(|soft| soft < target) {
            setrlimit(Resource::Nofile, Rlimit { current: Some(target), maximum: now.maximum })?;
        }
        Ok(open_files_limit())
    }
    #[cfg(not(unix))]
    {
        Ok(None)
    }
}

/// The most connections each of `listeners` listeners may serve at once under a limit
/// of `limit` open files: `requested` when that fits (or there is no limit), otherwise
/// what fits after [`RESERVED_DESCRIPTORS`] and each listener's refusals in progress
/// (at least 1).
pub fn connection_cap(requested: usize, listeners: usize, limit: Option<u64>) -> usize {
    let requested = requested.max(1);
    let Some(limit) = limit else { return requested };
    let per_listener = limit.saturating_sub(RESERVED_DESCRIPTORS) / listeners.max(1) as u64;
    let fits = per_listener.saturating_sub(super::listen::REFUSING as u64);
    requested.min(usize::try_from(fits).unwrap_or(usize::MAX)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_every_listener_and_its_refusals_under_the_limit() {
        assert_eq!(connection_cap(1024, 1, None), 1024);
        assert_eq!(connection_cap(1024, 2, Some(1 << 20)), 1024);
        // The usual soft limit of 1024: the default cap of 1024 does not fit.
        assert_eq!(connection_cap(1024, 1, Some(1024)), 1024 - 128 - 64);
        assert_eq!(connection_cap(1024, 2, Some(1024)), (1024 - 128) / 2 - 64);
        assert_eq!(connection_cap(0, 1, None), 1);
        assert_eq!(connection_cap(10, 2, Some(16)), 1, "at least one");
    }

    #[test]
    fn raising_the_limit_never_lowers_it() {
        let before = open_files_limit();
        let after = raise_open_files_limit().unwrap();
        assert!(after >= before || after.is_none(), "{before:?} -> {after:?}");
        assert_eq!(after, open_files_limit());
    }
}
