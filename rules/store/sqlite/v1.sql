CREATE TABLE tasks (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    terminal INTEGER NOT NULL,
    status_ts_ms INTEGER NOT NULL,
    version INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX tasks_by_status_ts ON tasks (tenant, status_ts_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks (tenant, context_id, status_ts_ms DESC, id DESC);
CREATE TABLE events (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    last INTEGER NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE push_configs (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, task_id, id),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due_ms INTEGER NOT NULL,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX outbox_by_due ON outbox (due_ms);
CREATE INDEX outbox_by_task ON outbox (tenant, task_id);
CREATE TABLE dead_letters (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    config BLOB NOT NULL,
    seq INTEGER NOT NULL,
    event BLOB NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
CREATE TABLE idempotency (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result BLOB,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
);
