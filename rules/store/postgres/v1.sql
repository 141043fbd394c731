CREATE TABLE a2a_tasks (
    tenant TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    context_id TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    terminal BOOLEAN NOT NULL,
    status_ts_ms BIGINT NOT NULL,
    version BIGINT NOT NULL,
    last_seq BIGINT NOT NULL DEFAULT 0,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX a2a_tasks_by_status_ts ON a2a_tasks (tenant, status_ts_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, context_id, status_ts_ms DESC, id DESC);
CREATE TABLE a2a_events (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    body BYTEA NOT NULL,
    last BOOLEAN NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_push_configs (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, task_id, id),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    due_ms BIGINT NOT NULL,
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX a2a_outbox_by_due ON a2a_outbox (due_ms);
CREATE INDEX a2a_outbox_by_task ON a2a_outbox (tenant, task_id);
CREATE TABLE a2a_dead_letters (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id BIGINT NOT NULL,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    config BYTEA NOT NULL,
    seq BIGINT NOT NULL,
    event BYTEA NOT NULL,
    attempts BIGINT NOT NULL,
    error TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE TABLE a2a_idempotency (
    tenant TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    result BYTEA,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);
