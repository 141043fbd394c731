//! Live fan-out of task events with replay from the log.
