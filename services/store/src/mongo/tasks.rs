//! [`TaskStore`] on MongoDB: the task queue, each transition one conditional
//! `find_one_and_update`.

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::ReturnDocument;

use super::fields::{date, json_field, num, opt_num, opt_string, opt_time, string, time};
use super::ids::Target;
use super::{collect, MongoStore};
use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::{StoreResult, TaskStore};
use crate::StoreError;

fn task_from(d: &Document) -> StoreResult<Task> {
    let id = num(d, "_id")?;
    let state = string(d, "state")?;
    let checkpoint = match opt_string(d, "checkpoint")? {
        Some(c) => {
            Some(serde_json::from_str(&c).map_err(|e| StoreError::corrupt(format!("checkpoint of task {id}"), e))?)
        }
        None => None,
    };
    Ok(Task {
        id,
        key: string(d, "key")?,
        kind: string(d, "kind")?,
        params: json_field(d, "params")?,
        state: TaskState::parse(&state).ok_or_else(|| StoreError::corrupt(format!("state of task {id}"), &state))?,
        progress: Progress {
            done: opt_num(d, "done")?.unwrap_or(0) as u64,
            total: opt_num(d, "total")?.unwrap_or(0) as u64,
            failed: opt_num(d, "failed")?.unwrap_or(0) as u64,
        },
        checkpoint,
        worker: opt_string(d, "worker")?,
        error: opt_string(d, "error")?,
        created_at: time(d, "created_at")?,
        started_at: opt_time(d, "started_at")?,
        finished_at: opt_time(d, "finished_at")?,
        updated_at: time(d, "updated_at")?,
    })
}

impl MongoStore {
    async fn transition(&self, id: i64, from: &[TaskState], to: TaskState, error: Option<&str>) -> StoreResult<Task> {
        let now = date(Timestamp::now());
        let mut set = doc! {"state": to.as_str(), "finished_at": now.clone(), "updated_at": now};
        if let Some(e) = error {
            set.insert("error", e);
        }
        let states: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let r = self
            .coll("tasks")
            .find_one_and_update(doc! {"_id": id, "state": {"$in": states}}, doc! {"$set": set})
            .return_document(ReturnDocument::After)
            .await?;
        match r {
            Some(d) => task_from(&d),
            None => {
                let t = self.get_task(id).await?.ok_or_else(|| StoreError::not_found("task", id))?;
                Err(StoreError::Conflict {
                    what: format!("task {id} ({})", t.key),
                    reason: format!("cannot go from {} to {}", t.state.as_str(), to.as_str()),
                })
            }
        }
    }
}

#[async_trait]
impl TaskStore for MongoStore {
    async fn create_task(&self, task: &NewTask) -> StoreResult<(Task, Outcome)> {
        let params_json = validate_task(task)?;
        let coll = self.coll("tasks");
        let check = |d: &Document| -> StoreResult<(Task, Outcome)> {
            let t = task_from(d)?;
            if t.kind != task.kind || t.params != task.params {
                return Err(StoreError::Conflict {
                    what: format!("task {}", task.key),
                    reason: "exists with another kind or other parameters".into(),
                });
            }
            Ok((t, Outcome::Unchanged))
        };
        if let Some(d) = coll.find_one(doc! {"key": &task.key}).await? {
            return check(&d);
        }
        let id = self.next_ids("tasks", 1).await?;
        let now = date(Timestamp::now());
        let d = doc! {
            "_id": id, "key": &task.key, "kind": &task.kind, "params": params_json, "state": TaskState::Queued.as_str(),
            "done": 0_i64, "total": 0_i64, "failed": 0_i64, "checkpoint": Bson::Null, "worker": Bson::Null, "error": Bson::Null,
            "created_at": now.clone(), "started_at": Bson::Null, "finished_at": Bson::Null, "updated_at": now,
        };
        match coll.insert_one(d.clone()).await {
            Ok(_) => Ok((task_from(&d)?, Outcome::Inserted)),
            Err(e) if is_mongo_duplicate(&e) => {
                // Lost a race with another creator of the same key.
                let d = coll
                    .find_one(doc! {"key": &task.key})
                    .await?
                    .ok_or_else(|| StoreError::not_found("task", &task.key))?;
                check(&d)
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn claim_task(&self, kind: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let mut filter = doc! {"state": TaskState::Queued.as_str()};
        if let Some(k) = kind {
            filter.insert("kind", k);
        }
        let now = date(Timestamp::now());
        let d = self
            .coll("tasks")
            .find_one_and_update(filter, doc! {"$set": {"state": TaskState::Running.as_str(), "worker": worker, "started_at": now.clone(), "updated_at": now}})
            .sort(doc! {"_id": 1})
            .return_document(ReturnDocument::After)
            .await?;
        d.as_ref().map(task_from).transpose()
    }

    async fn take_over_task(&self, id: i64, from: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        // `worker: null` also matches a task whose worker field is missing.
        let from = from.map_or(Bson::Null, |w| Bson::String(w.to_owned()));
        let d = self
            .coll("tasks")
            .find_one_and_update(
                doc! {"_id": id, "state": TaskState::Running.as_str(), "worker": from},
                doc! {"$set": {"worker": worker, "updated_at": date(Timestamp::now())}},
            )
            .return_document(ReturnDocument::After)
            .await?;
        d.as_ref().map(task_from).transpose()
    }

    async fn update_progress(
        &self,
        id: i64,
        progress: Progress,
        checkpoint: Option<&serde_json::Value>,
    ) -> StoreResult<Task> {
        let mut set = doc! {
            "done": progress.done as i64, "total": progress.total as i64, "failed": progress.failed as i64,
            "updated_at": date(Timestamp::now()),
        };
        if let Some(c) = checkpoint {
            set.insert("checkpoint", c.to_string());
        }
        let d = self
            .coll("tasks")
            .find_one_and_update(doc! {"_id": id, "state": TaskState::Running.as_str()}, doc! {"$set": set})
            .return_document(ReturnDocument::After)
            .await?;
        match d {
            Some(d) => task_from(&d),
            None => {
                let t = self.get_task(id).await?.ok_or_else(|| StoreError::not_found("task", id))?;
                Err(StoreError::Conflict {
                    what: format!("task {id}"),
                    reason: format!("is {}, not running", t.state.as_str()),
                })
            }
        }
    }

    async fn finish_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Succeeded, None).await
    }

    async fn fail_task(&self, id: i64, error: &str) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Failed, Some(error)).await
    }

    async fn cancel_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Queued, TaskState::Running], TaskState::Cancelled, None).await
    }

    async fn get_task(&self, id: i64) -> StoreResult<Option<Task>> {
        self.coll("tasks").find_one(doc! {"_id": id}).await?.as_ref().map(task_from).transpose()
    }

    async fn find_task(&self, key: &str) -> StoreResult<Option<Task>> {
        self.coll("tasks").find_one(doc! {"key": key}).await?.as_ref().map(task_from).transpose()
    }

    async fn list_tasks(
        &self,
        state: Option<TaskState>,
        kind: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<Task>> {
        let limit = check_limit(limit)?;
        if let (Some(state), Some(kind)) = (state, kind) {
            // The `state_kind_id` index holds exactly these, in id order: one read (the
            // workers poll for running tasks of their kind every second).
            let filter = doc! {"state": state.as_str(), "kind": kind, "_id": {"$gt": after_id}};
            let docs = collect(self.coll("tasks").find(filter).sort(doc! {"_id": 1}).limit(limit).await?).await?;
            return docs.iter().map(task_from).collect();
        }
        let mut filter = state.map_or_else(Document::new, |s| doc! {"state": s.as_str()});
        if let Some(kind) = kind {
            filter.insert("kind", kind);
        }
        let docs = self.scan(Target::ids("tasks"), filter, after_id, limit, None).await?;
        docs.iter().map(task_from).collect()
    }

    async fn latest_task(&self, kind: &str, state: TaskState) -> StoreResult<Option<Task>> {
        // The `state_kind_id` index narrows the documents to sort; a task that ran has
        // its start time (one never started sorts last, as its creation time would).
        let d = self
            .coll("tasks")
            .find_one(doc! {"state": state.as_str(), "kind": kind})
            .sort(doc! {"started_at": -1, "_id": -1})
            .await?;
        d.as_ref().map(task_from).transpose()
    }
}
