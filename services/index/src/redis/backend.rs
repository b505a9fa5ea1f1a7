//! [`CandidateIndex`] for [`RedisIndex`]: the trait's operations over the pieces of the
//! parent module.

use super::*;

#[async_trait]
impl CandidateIndex for RedisIndex {
    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn add_batch(&self, ns: Namespace, docs: &[(DocId, Vec<IndexKey>)]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let filter = self.begin_write(ns, "add").await?;
        let docs = last_wins(docs);
        let ids: Vec<DocId> = docs.iter().map(|d| d.0).collect();
        let old = self.old_keys(ns, &ids).await?;
        // Documents indexed again with the same keys (a page matched again) change nothing.
        let docs: Vec<_> =
            docs.into_iter().filter(|(doc, keys)| old.get(doc).is_none_or(|o| o[..] != keys[..])).collect();
        if docs.is_empty() {
            return Ok(());
        }
        self.begin_change(ns).await?;

        let mut stale = Vec::new();
        let mut fresh = Vec::new();
        for (doc, keys) in &docs {
            if let Some(old_keys) = old.get(doc) {
                let new: HashSet<&IndexKey> = keys.iter().collect();
                for k in old_keys.iter().filter(|k| !new.contains(k)) {
                    stale.push(Entry { place: self.place(ns, k), field: field(k), doc: Some(*doc), tag: 0 });
                }
            }
            for k in keys {
                fresh.push(Entry { place: self.place(ns, k), field: field(k), doc: Some(*doc), tag: 0 });
            }
        }
        if let Some(geometry) = filter {
            self.add_to_filter(geometry, docs.iter().flat_map(|(_, keys)| keys.iter())).await?;
        }
        let mut delta = 0i64;
        if !stale.is_empty() {
            let calls: Vec<ScriptCall> = self.script_calls(ns, stale, None).into_iter().map(|c| c.0).collect();
            for v in self.run_scripts("remove stale keys", &self.remove_script, &calls).await? {
                delta -= int(&v)?;
            }
        }
        let cap = self.config.index.big_bucket_cap.to_string().into_bytes();
        let calls: Vec<ScriptCall> = self.script_calls(ns, fresh, Some(cap)).into_iter().map(|c| c.0).collect();
        let mut big = Vec::new();
        for v in self.run_scripts("add keys", &self.add_script, &calls).await? {
            let Value::Array(items) = v else {
                return Err(IndexError::Corrupt(format!("add script answered {v:?}")));
            };
            let mut items = items.into_iter();
            delta += int(&items.next().unwrap_or(Value::Nil))?;
            for item in items {
                if let Value::BulkString(f) = item {
                    big.push(f);
                }
            }
        }

        let mut by_group: BTreeMap<Vec<u8>, Vec<&(DocId, Vec<IndexKey>)>> = BTreeMap::new();
        for d in &docs {
            by_group.entry(self.doc_group_key(ns, d.0)).or_default().push(d);
        }
        let cmds = by_group
            .into_iter()
            .map(|(key, docs)| {
                let mut cmd = redis::cmd("HSET");
                cmd.arg(key);
                for (doc, keys) in docs {
                    cmd.arg(&doc.to_be_bytes()[..]).arg(pack_keys(keys));
                }
                cmd
            })
            .collect();
        self.run("store document keys", cmds).await?;
        self.finish_write(ns, delta, big).await
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.ensure_marker("remove").await?;
        let old = self.old_keys(ns, &[doc]).await?;
        let Some(keys) = old.get(&doc) else {
            return Ok(false);
        };
        self.begin_change(ns).await?;
        let entries =
            keys.iter().map(|k| Entry { place: self.place(ns, k), field: field(k), doc: Some(doc), tag: 0 }).collect();
        let calls: Vec<ScriptCall> = self.script_calls(ns, entries, None).into_iter().map(|c| c.0).collect();
        let mut delta = 0;
        for v in self.run_scripts("remove keys", &self.remove_script, &calls).await? {
            delta -= int(&v)?;
        }
        let mut cmd = redis::cmd("HDEL");
        cmd.arg(self.doc_group_key(ns, doc)).arg(&doc.to_be_bytes()[..]);
        self.run("remove document", vec![cmd]).await?;
        self.finish_write(ns, delta, Vec::new()).await?;
        Ok(true)
    }

    async fn lookup(&self, ns: Namespace, keys: &[IndexKey], limit: usize) -> Result<LookupResult> {
        let (keys, modulus) = crate::sample_query_keys(normalize_keys(keys), self.config.index.query_key_budget);
        self.lookup_keys(ns, keys, limit, modulus).await
    }

    async fn lookup_sampled(&self, ns: Namespace, keys: &[IndexKey], modulus: u64) -> Result<LookupResult> {
        self.lookup_keys(ns, normalize_keys(keys), usize::MAX, modulus).await
    }

    fn query_sample_modulus(&self, fixed: usize, winnowed: usize) -> u64 {
        crate::query_sample_modulus(fixed, winnowed, self.config.index.query_key_budget)
    }

    async fn common_keys(&self, ns: Namespace, family: IndexFamily, min_docs: u32) -> Result<Vec<u64>> {
        self.ensure_marker("common keys").await?;
        // The answer is kept in Redis with the write token it was read at: a new process
        // (every `zhiwen match`) reads it back while the namespace is unchanged, where
        // reading every bucket again cost ~19 s of Redis CPU at a million sections. The
        // token is read before the buckets: a write while they are read sets another one,
        // and the kept answer is not used after it. A server that lost its data since the
        // marker was checked has no token and no kept answer: the buckets are read, and
        // the marker checked after them.
        let token = self.write_token(ns).await?;
        let kept_key = self.common_keys_key(ns, family, min_docs);
        if token != 0 {
            let mut get = redis::cmd("GET");
            get.arg(&kept_key);
            let kept: Option<Vec<u8>> = self.query_one(get).await.map_err(self.err("common keys"))?;
            if let Some(keys) = kept.as_deref().and_then(|b| kept_common_keys(b, token)) {
                return Ok(keys);
            }
        }
        let need = (8 * u64::from(min_docs.max(1))).to_string().into_bytes();
        let mut out = Vec::new();
        // A script reads COMMON_BUCKETS buckets of one group (one slot), so the server
        // is never blocked for long; COMMON_CALLS scripts are sent at a time.
        let mut calls = Vec::new();
        for group in self.bucket_keys_by_group(ns) {
            for keys in group.chunks(COMMON_BUCKETS) {
                calls.push(ScriptCall { keys: keys.to_vec(), args: vec![vec![family.code()], need.clone()] });
            }
        }
        for chunk in calls.chunks(COMMON_CALLS) {
            for answer in self.run_scripts("common keys", &self.common_script, chunk).await? {
                let Value::Array(fields) = answer else {
                    return Err(IndexError::Corrupt(format!("common keys answered {answer:?}")));
                };
                for f in fields {
                    match &f {
                        Value::BulkString(b) => match unpack_key(b) {
                            Some(key) if key.family == family => out.push(key.value),
                            _ => return Err(IndexError::Corrupt(format!("bad field {b:?} in a bucket"))),
                        },
                        other => return Err(IndexError::Corrupt(format!("common keys answered {other:?}"))),
                    }
                }
            }
        }
        // The server may have lost its data while it was read.
        self.ensure_marker("common keys").await?;
        if token != 0 {
            let mut kept = Vec::with_capacity(8 * (out.len() + 1));
            kept.extend_from_slice(&token.to_le_bytes());
            out.iter().for_each(|v| kept.extend_from_slice(&v.to_le_bytes()));
            let mut set = redis::cmd("SET");
            set.arg(&kept_key).arg(kept);
            self.run("keep the common keys", vec![set]).await?;
        }
        Ok(out)
    }

    async fn write_token(&self, ns: Namespace) -> Result<u64> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.write_token_key(ns));
        let token: Option<Vec<u8>> = self.query_one(cmd).await.map_err(self.err("write token"))?;
        match token {
            None => Ok(0),
            Some(t) => std::str::from_utf8(&t)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| IndexError::Corrupt(format!("write token of {}: {t:?}", ns.as_str()))),
        }
    }

    async fn stats(&self) -> Result<IndexStats> {
        let groups = 1u32 << self.config.group_bits;
        let mut cmds = Vec::new();
        for ns in Namespace::ALL {
            let mut get = redis::cmd("GET");
            get.arg(self.counter_key(ns));
            let mut scard = redis::cmd("SCARD");
            scard.arg(self.big_key(ns));
            cmds.push(get);
            cmds.push(scard);
            for g in 0..groups {
                let mut hlen = redis::cmd("HLEN");
                hlen.arg(self.doc_group_key_of(ns, g));
                cmds.push(hlen);
            }
        }
        let values = self.run("stats", cmds).await?;
        let per_ns = values.len() / 2;
        let mut namespaces = Vec::new();
        for (i, ns) in Namespace::ALL.into_iter().enumerate() {
            let v = &values[i * per_ns..(i + 1) * per_ns];
            let documents = v[2..].iter().map(int).sum::<Result<i64>>()?;
            namespaces.push(NamespaceStats {
                namespace: ns,
                documents: documents.max(0) as u64,
                postings: int(&v[0])?.max(0) as u64,
                big_buckets: int(&v[1])?.max(0) as u64,
            });
        }
        let mut info = redis::cmd("INFO");
        info.arg("memory");
        // Standalone: one text; cluster: a map from node to its text (summed).
        let info: Value = self.query_one(info).await.map_err(self.err("stats"))?;
        let bytes_used = used_memory(&info);
        let section_filter = self.filter_stats().await?;
        Ok(IndexStats { backend: self.backend().into(), namespaces, bytes_used, file_bytes: 0, section_filter })
    }

    async fn clear(&self, ns: Namespace) -> Result<()> {
        let mut cmds = Vec::new();
        for (group, keys) in self.bucket_keys_by_group(ns).enumerate() {
            // All buckets of a group share its hash tag: one multi-key UNLINK per slot.
            let mut cmd = redis::cmd("UNLINK");
            cmd.arg(keys);
            cmds.push(cmd);
            let mut docs = redis::cmd("UNLINK");
            docs.arg(self.doc_group_key_of(ns, group as u32));
            cmds.push(docs);
        }
        for key in [self.counter_key(ns), self.big_key(ns)] {
            let mut cmd = redis::cmd("UNLINK");
            cmd.arg(key);
            cmds.push(cmd);
        }
        if ns == Namespace::Sections {
            cmds.extend(self.per_filter_shard("UNLINK"));
        }
        self.run("clear", cmds).await?;
        self.run("record the write", vec![self.new_write_token(ns), self.next_generation()]).await?;
        // Empty now: the namespace is written with the configured bucket bits from here.
        self.record_layout(ns, true).await?;
        if ns == Namespace::Sections {
            self.reset_filter().await?;
        }
        self.arm_marker(true).await
    }

    async fn ping(&self) -> Result<()> {
        let _: String = self.query_one(redis::cmd("PING")).await.map_err(self.err("ping"))?;
        Ok(())
    }

    async fn identity(&self) -> Result<Option<String>> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.marker_key());
        let identity = self.query_one(cmd).await.map_err(self.err("identity"))?;
        // Another process may have rebuilt a namespace with other bucket bits.
        self.read_layout(false).await?;
        Ok(identity)
    }

    async fn generation(&self) -> Result<u64> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.generation_key());
        let v: Value = self.query_one(cmd).await.map_err(self.err("generation"))?;
        u64::try_from(int(&v)?).map_err(|_| IndexError::Corrupt(format!("generation {v:?}")))
    }
}

/// The big-bucket keys recorded for `ns` (for reports and tests).
impl RedisIndex {
    /// Keys of `ns` whose posting list became a big bucket.
    pub async fn big_buckets(&self, ns: Namespace) -> Result<Vec<IndexKey>> {
        let mut cmd = redis::cmd("SMEMBERS");
        cmd.arg(self.big_key(ns));
        let members: Vec<Vec<u8>> = self.query_one(cmd).await.map_err(self.err("big buckets"))?;
        let mut keys: Vec<IndexKey> = members.iter().filter_map(|m| unpack_key(m)).collect();
        keys.sort_unstable();
        Ok(keys)
    }
}

/// The keys of a kept answer of `common_keys` ([`RedisIndex::common_keys_key`]) when it
/// was read at write token `token`; `None` for another token or a value of another form.
fn kept_common_keys(kept: &[u8], token: u64) -> Option<Vec<u64>> {
    let (at, keys) = kept.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*at) != token || keys.len() % 8 != 0 {
        return None;
    }
    keys.chunks_exact(8).map(|c| c.try_into().ok().map(u64::from_le_bytes)).collect()
}
