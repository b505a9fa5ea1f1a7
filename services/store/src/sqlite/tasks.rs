//! [`TaskStore`] on the embedded store: the task queue, each transition one transaction.

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{opt_ts, ts, SqliteStore};
use crate::codec::*;
use crate::model::*;
use crate::traits::{StoreResult, TaskStore};
use crate::StoreError;

const TASK_COLS: &str =
    "id, key, kind, params, state, done, total, failed, checkpoint, worker, error, created_at, started_at, finished_at, updated_at";

fn task_row(r: &Row) -> rusqlite::Result<(Task, String, String, Option<String>)> {
    Ok((
        Task {
            id: r.get(0)?,
            key: r.get(1)?,
            kind: r.get(2)?,
            params: serde_json::Value::Null,
            state: TaskState::Queued,
            progress: Progress {
                done: r.get::<_, i64>(5)? as u64,
                total: r.get::<_, i64>(6)? as u64,
                failed: r.get::<_, i64>(7)? as u64,
            },
            checkpoint: None,
            worker: r.get(9)?,
            error: r.get(10)?,
            created_at: ts(r, 11)?,
            started_at: opt_ts(r, 12)?,
            finished_at: opt_ts(r, 13)?,
            updated_at: ts(r, 14)?,
        },
        r.get(3)?,
        r.get(4)?,
        r.get(8)?,
    ))
}

fn finish_task((mut t, params, state, checkpoint): (Task, String, String, Option<String>)) -> StoreResult<Task> {
    t.params = serde_json::from_str(&params).map_err(|e| StoreError::corrupt(format!("params of task {}", t.id), e))?;
    t.state = TaskState::parse(&state).ok_or_else(|| StoreError::corrupt(format!("state of task {}", t.id), &state))?;
    t.checkpoint = checkpoint
        .map(|c| serde_json::from_str(&c))
        .transpose()
        .map_err(|e| StoreError::corrupt(format!("checkpoint of task {}", t.id), e))?;
    Ok(t)
}

fn load_task(c: &Connection, id: i64) -> StoreResult<Option<Task>> {
    let row = c
        .prepare_cached(&format!("SELECT {TASK_COLS} FROM tasks WHERE id = ?1"))?
        .query_row(params![id], task_row)
        .optional()?;
    row.map(finish_task).transpose()
}

impl SqliteStore {
    /// Move a task from one of `from` to `to`, setting extra columns; `Conflict` otherwise.
    async fn transition(
        &self,
        id: i64,
        from: &'static [TaskState],
        to: TaskState,
        error: Option<String>,
    ) -> StoreResult<Task> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let task = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            if !from.contains(&task.state) {
                return Err(StoreError::Conflict {
                    what: format!("task {id} ({})", task.key),
                    reason: format!("cannot go from {} to {}", task.state.as_str(), to.as_str()),
                });
            }
            let now = Timestamp::now().0;
            tx.execute(
                "UPDATE tasks SET state = ?2, error = COALESCE(?3, error), finished_at = ?4, updated_at = ?4 WHERE id = ?1",
                params![id, to.as_str(), error, now],
            )?;
            let task = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            tx.commit()?;
            Ok(task)
        })
        .await
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create_task(&self, task: &NewTask) -> StoreResult<(Task, Outcome)> {
        let params_json = validate_task(task)?;
        let task = task.clone();
        self.run(move |c| {
            let tx = c.transaction()?;
            let existing = tx.query_row("SELECT id FROM tasks WHERE key = ?1", params![task.key], |r| r.get::<_, i64>(0)).optional()?;
            if let Some(id) = existing {
                let t = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
                if t.kind != task.kind || t.params != task.params {
                    return Err(StoreError::Conflict {
                        what: format!("task {}", task.key),
                        reason: "exists with another kind or other parameters".into(),
                    });
                }
                return Ok((t, Outcome::Unchanged));
            }
            let now = Timestamp::now().0;
            tx.execute(
                "INSERT INTO tasks (key, kind, params, state, created_at, updated_at) VALUES (?1, ?2, ?3, 'queued', ?4, ?4)",
                params![task.key, task.kind, params_json, now],
            )?;
            let t = load_task(&tx, tx.last_insert_rowid())?.ok_or_else(|| StoreError::not_found("task", &task.key))?;
            tx.commit()?;
            Ok((t, Outcome::Inserted))
        })
        .await
    }

    async fn claim_task(&self, kind: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let (kind, worker) = (kind.map(str::to_owned), worker.to_owned());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM tasks WHERE state = 'queued' AND (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT 1",
                    params![kind],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            let now = Timestamp::now().0;
            tx.execute(
                "UPDATE tasks SET state = 'running', worker = ?2, started_at = ?3, updated_at = ?3 WHERE id = ?1",
                params![id, worker, now],
            )?;
            let t = load_task(&tx, id)?;
            tx.commit()?;
            Ok(t)
        })
        .await
    }

    async fn take_over_task(&self, id: i64, from: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let (from, worker) = (from.map(str::to_owned), worker.to_owned());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let n = tx.execute(
                "UPDATE tasks SET worker = ?3, updated_at = ?4 WHERE id = ?1 AND state = 'running' AND worker IS ?2",
                params![id, from, worker, Timestamp::now().0],
            )?;
            let t = if n == 0 { None } else { load_task(&tx, id)? };
            tx.commit()?;
            Ok(t)
        })
        .await
    }

    async fn update_progress(
        &self,
        id: i64,
        progress: Progress,
        checkpoint: Option<&serde_json::Value>,
    ) -> StoreResult<Task> {
        let checkpoint = checkpoint.map(|c| c.to_string());
        self.run(move |c| {
            let now = Timestamp::now().0;
            let n = c.execute(
                "UPDATE tasks SET done = ?2, total = ?3, failed = ?4, checkpoint = COALESCE(?5, checkpoint), updated_at = ?6 WHERE id = ?1 AND state = 'running'",
                params![id, progress.done as i64, progress.total as i64, progress.failed as i64, checkpoint, now],
            )?;
            let t = load_task(c, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            if n == 0 {
                return Err(StoreError::Conflict { what: format!("task {id}"), reason: format!("is {}, not running", t.state.as_str()) });
            }
            Ok(t)
        })
        .await
    }

    async fn finish_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Succeeded, None).await
    }

    async fn fail_task(&self, id: i64, error: &str) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Failed, Some(error.to_owned())).await
    }

    async fn cancel_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Queued, TaskState::Running], TaskState::Cancelled, None).await
    }

    async fn get_task(&self, id: i64) -> StoreResult<Option<Task>> {
        self.read(move |c| load_task(c, id)).await
    }

    async fn find_task(&self, key: &str) -> StoreResult<Option<Task>> {
        let key = key.to_owned();
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {TASK_COLS} FROM tasks WHERE key = ?1"), params![key], task_row)
                .optional()?;
            row.map(finish_task).transpose()
        })
        .await
    }

    async fn list_tasks(
        &self,
        state: Option<TaskState>,
        kind: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<Task>> {
        let limit = check_limit(limit)?;
        let kind = kind.map(str::to_owned);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {TASK_COLS} FROM tasks WHERE id > ?1 AND (?2 IS NULL OR state = ?2) \
                 AND (?3 IS NULL OR kind = ?3) ORDER BY id LIMIT ?4"
            ))?;
            let rows = stmt
                .query_map(params![after_id, state.map(|s| s.as_str()), kind, limit], task_row)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_task).collect()
        })
        .await
    }

    async fn latest_task(&self, kind: &str, state: TaskState) -> StoreResult<Option<Task>> {
        let kind = kind.to_owned();
        self.read(move |c| {
            // The `tasks_state (state, kind, id)` index narrows the rows to sort.
            let row = c
                .prepare_cached(&format!(
                    "SELECT {TASK_COLS} FROM tasks WHERE state = ?1 AND kind = ?2 \
                     ORDER BY COALESCE(started_at, created_at) DESC, id DESC LIMIT 1"
                ))?
                .query_row(params![state.as_str(), kind], task_row)
                .optional()?;
            row.map(finish_task).transpose()
        })
        .await
    }
}
