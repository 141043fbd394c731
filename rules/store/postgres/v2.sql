ALTER TABLE a2a_tasks ADD COLUMN lease_owner TEXT COLLATE "C", ADD COLUMN lease_until_ms BIGINT;
UPDATE a2a_tasks SET lease_owner = '', lease_until_ms = 0
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE INDEX a2a_tasks_by_lease ON a2a_tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX a2a_tasks_terminal_by_age ON a2a_tasks (status_ts_ms) WHERE terminal;
CREATE INDEX a2a_idempotency_by_age ON a2a_idempotency (created_ms);
CREATE INDEX a2a_dead_letters_by_age ON a2a_dead_letters (at_ms);
