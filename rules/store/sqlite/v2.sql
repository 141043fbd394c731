ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until_ms INTEGER;
UPDATE tasks SET lease_owner = '', lease_until_ms = 0
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE INDEX tasks_by_lease ON tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX tasks_terminal_by_age ON tasks (status_ts_ms) WHERE terminal = 1;
CREATE INDEX idempotency_by_age ON idempotency (created_ms);
CREATE INDEX dead_letters_by_age ON dead_letters (at_ms);
