//! Writing and reading posting lists: the script calls that add entries, the old keys of
//! re-added documents, the reads of buckets for a lookup and the statistics after a write.

use super::*;

impl RedisIndex {
    /// Group entries into script calls whose keys share one slot: one slot group per
    /// call on a cluster; on a standalone server any buckets may share a call, which
    /// saves per-command overhead. Each entry becomes `(key index, field[, doc])`
    /// arguments; the tags tell which entry each argument group came from.
    pub(super) fn script_calls(
        &self,
        ns: Namespace,
        entries: Vec<Entry>,
        lead: Option<Vec<u8>>,
    ) -> Vec<(ScriptCall, Vec<usize>)> {
        let mut by_scope: BTreeMap<u32, Vec<Entry>> = BTreeMap::new();
        for e in entries {
            let scope = if self.config.cluster { e.place.group } else { 0 };
            by_scope.entry(scope).or_default().push(e);
        }
        let mut calls = Vec::new();
        for (_, mut scope) in by_scope {
            scope.sort_unstable_by_key(|e| e.place.bucket);
            for chunk in scope.chunks(SCRIPT_ENTRIES) {
                let mut keys: Vec<Vec<u8>> = Vec::new();
                let mut index: HashMap<u32, usize> = HashMap::new();
                let mut args = Vec::with_capacity(chunk.len() * 3 + 1);
                let mut tags = Vec::with_capacity(chunk.len());
                if let Some(lead) = &lead {
                    args.push(lead.clone());
                }
                for e in chunk {
                    let i = *index.entry(e.place.bucket).or_insert_with(|| {
                        keys.push(self.bucket_key(ns, e.place));
                        keys.len()
                    });
                    args.push(i.to_string().into_bytes());
                    args.push(e.field.to_vec());
                    if let Some(doc) = e.doc {
                        args.push(doc.to_be_bytes().to_vec());
                    }
                    tags.push(e.tag);
                }
                calls.push((ScriptCall { keys, args }, tags));
            }
        }
        calls
    }

    /// The stored key lists of `docs` (None when not indexed).
    pub(super) async fn old_keys(&self, ns: Namespace, docs: &[DocId]) -> Result<HashMap<DocId, Vec<IndexKey>>> {
        let mut by_group: BTreeMap<Vec<u8>, Vec<DocId>> = BTreeMap::new();
        for &doc in docs {
            by_group.entry(self.doc_group_key(ns, doc)).or_default().push(doc);
        }
        let mut cmds = Vec::with_capacity(by_group.len());
        let mut order = Vec::with_capacity(by_group.len());
        for (key, docs) in by_group {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(key);
            for d in &docs {
                cmd.arg(&d.to_be_bytes()[..]);
            }
            cmds.push(cmd);
            order.push(docs);
        }
        let values = self.run("read document keys", cmds).await?;
        let mut out = HashMap::new();
        for (docs, value) in order.into_iter().zip(values) {
            let Value::Array(items) = value else {
                return Err(IndexError::Corrupt(format!("HMGET answered {value:?}")));
            };
            for (doc, item) in docs.into_iter().zip(items) {
                match item {
                    Value::Nil => {}
                    Value::BulkString(blob) => {
                        let keys = unpack_keys(&blob)
                            .ok_or_else(|| IndexError::Corrupt(format!("bad key list of document {doc}")))?;
                        out.insert(doc, keys);
                    }
                    other => return Err(IndexError::Corrupt(format!("document {doc}: {other:?}"))),
                }
            }
        }
        Ok(out)
    }

    /// Read the postings of `placed` (sorted by place) into `acc`, one `HMGET` per
    /// bucket, in pipelines that start with the `head` commands; returns their replies.
    pub(super) async fn read_postings(
        &self,
        ns: Namespace,
        head: Vec<Cmd>,
        placed: &[(Place, IndexKey)],
        acc: &mut Accumulator,
    ) -> Result<Vec<Value>> {
        let mut cmds = head;
        let head_len = cmds.len();
        let mut spans = Vec::with_capacity(placed.len());
        for same in placed.chunk_by(|a, b| a.0 == b.0) {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(self.bucket_key(ns, same[0].0));
            for (_, k) in same {
                cmd.arg(&field(k)[..]);
            }
            cmds.push(cmd);
            spans.push(same);
        }
        // A sampled 10 KB page is one pipeline: one write, one reply, one round trip.
        let per_pipe = self.config.pipeline_commands.max(LOOKUP_PIPELINE_COMMANDS);
        let mut values = self.run_with("lookup", cmds, per_pipe).await?;
        let postings = values.split_off(head_len.min(values.len()));
        for (same, value) in spans.into_iter().zip(postings) {
            let Value::Array(items) = value else {
                return Err(IndexError::Corrupt(format!("HMGET answered {value:?}")));
            };
            if items.len() != same.len() {
                return Err(IndexError::Corrupt(format!("HMGET of {} fields answered {}", same.len(), items.len())));
            }
            for (&(_, key), item) in same.iter().zip(items) {
                match item {
                    Value::Nil => {}
                    Value::BulkString(b) if b == b"BIG" => acc.big(key),
                    Value::BulkString(b) if b.len() % 8 == 0 => {
                        acc.posting(
                            key.family,
                            b.chunks_exact(8).map(|id| u64::from_be_bytes(id.try_into().unwrap_or([0; 8]))),
                        );
                    }
                    other => return Err(IndexError::Corrupt(format!("posting of {key:?}: {other:?}"))),
                }
            }
        }
        Ok(values)
    }

    /// A new write token before a write changes `ns` (and another after it, in
    /// [`RedisIndex::finish_write`]): a write that fails half-way, and whose repetition
    /// finds nothing left to change, has still changed the token.
    pub(super) async fn begin_change(&self, ns: Namespace) -> Result<()> {
        self.run("record the write", vec![self.new_write_token(ns)]).await.map(drop)
    }

    /// Record statistics and big buckets, and check the marker after a write.
    pub(super) async fn finish_write(&self, ns: Namespace, delta: i64, big: Vec<Vec<u8>>) -> Result<()> {
        // A new write token (after the write: see `CandidateIndex::write_token`), and the
        // write counted in the generation once its data is in place.
        let mut cmds = vec![self.marker_cmd(), self.new_write_token(ns), self.next_generation()];
        if delta != 0 {
            let mut cmd = redis::cmd("INCRBY");
            cmd.arg(self.counter_key(ns)).arg(delta);
            cmds.push(cmd);
        }
        if !big.is_empty() {
            let mut cmd = redis::cmd("SADD");
            cmd.arg(self.big_key(ns));
            for f in big {
                cmd.arg(f);
            }
            cmds.push(cmd);
        }
        let values = self.run("record statistics", cmds).await?;
        self.check_marker(values.first().unwrap_or(&Value::Nil))
    }
}

impl RedisIndex {
    /// Look up normalised keys, sampled at `modulus` already.
    pub(super) async fn lookup_keys(
        &self,
        ns: Namespace,
        keys: Vec<IndexKey>,
        limit: usize,
        modulus: u64,
    ) -> Result<LookupResult> {
        // One HMGET per bucket (one slot each); measured faster than reading the same
        // fields from a Lua script, whose per-call conversions cost more than command
        // dispatch. Keys sorted by bucket so that keys sharing a bucket share a command.
        let mut placed: Vec<(Place, IndexKey)> = keys.iter().map(|k| (self.place(ns, k), *k)).collect();
        placed.sort_unstable();
        let snapshot = if ns == Namespace::Sections { self.filter_snapshot().await? } else { None };
        let (read, skipped): (Vec<_>, Vec<_>) = match &snapshot {
            Some(filter) => placed.into_iter().partition(|(_, k)| filter.may_contain(key_hash(k))),
            None => (placed, Vec::new()),
        };
        let mut head = vec![self.marker_cmd()];
        if snapshot.is_some() {
            let mut version = redis::cmd("GET");
            version.arg(self.filter_version_key());
            head.push(version);
        }
        let mut acc = Accumulator::with_capacity(read.len() + skipped.len());
        let head = self.read_postings(ns, head, &read, &mut acc).await?;
        self.check_marker(head.first().unwrap_or(&Value::Nil))?;
        if let Some(filter) = &snapshot {
            // Another version: a write finished since the snapshot, and the keys it
            // skipped may now have postings.
            if head.get(1).map(int).transpose()?.unwrap_or(0) != filter.version {
                filter.mark_stale();
                self.read_postings(ns, Vec::new(), &skipped, &mut acc).await?;
            }
        }
        Ok(acc.finish_sampled(keys.len(), limit, modulus))
    }
}
