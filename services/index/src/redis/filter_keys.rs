//! The presence filter as stored in Redis: its size, version and shards, created,
//! reset, extended on writes and loaded as a snapshot for lookups ([`super::filter`]).

use super::*;

impl RedisIndex {
    pub(super) fn filter_size_key(&self) -> Vec<u8> {
        self.key(&[b"fz", Namespace::Sections.as_str().as_bytes()])
    }

    pub(super) fn filter_version_key(&self) -> Vec<u8> {
        self.key(&[b"fv", Namespace::Sections.as_str().as_bytes()])
    }

    pub(super) fn filter_shard_key(&self, shard: u32) -> Vec<u8> {
        self.key(&[b"f", Namespace::Sections.as_str().as_bytes(), format!("{{f{shard:x}}}").as_bytes()])
    }

    /// `command shard-key` for every shard of the section filter, in shard order.
    pub(super) fn per_filter_shard(&self, command: &str) -> Vec<Cmd> {
        (0..filter::SHARDS)
            .map(|shard| {
                let mut cmd = redis::cmd(command);
                cmd.arg(self.filter_shard_key(shard));
                cmd
            })
            .collect()
    }

    /// Give an empty sections namespace a filter of `geometry`. A namespace that holds
    /// keys keeps what it has: a filter made now would not hold them.
    pub(super) async fn create_filter_if_empty(&self, geometry: Geometry) -> Result<()> {
        let mut get = redis::cmd("GET");
        get.arg(self.counter_key(Namespace::Sections));
        let stored: Value = self.query_one(get).await.map_err(self.err("create section filter"))?;
        if int(&stored)? != 0 {
            return Ok(());
        }
        let mut set = redis::cmd("SET");
        set.arg(self.filter_size_key()).arg(geometry.bits).arg("NX");
        let _: Value = self.query_one(set).await.map_err(self.err("create section filter"))?;
        Ok(())
    }

    /// After the sections namespace was emptied: a version no snapshot has (the clock, so
    /// that it also differs from versions counted before a server lost its data), and
    /// this process's filter size, or none.
    pub(super) async fn reset_filter(&self) -> Result<()> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as i64 & i64::MAX);
        let mut version = redis::cmd("SET");
        version.arg(self.filter_version_key()).arg(now);
        let size = match Geometry::from_mb(self.config.section_filter_mb) {
            Some(geometry) => {
                let mut cmd = redis::cmd("SET");
                cmd.arg(self.filter_size_key()).arg(geometry.bits);
                cmd
            }
            None => {
                let mut cmd = redis::cmd("UNLINK");
                cmd.arg(self.filter_size_key());
                cmd
            }
        };
        self.run("reset section filter", vec![version, size]).await?;
        Ok(())
    }

    /// Check the marker before a write; for the sections namespace also read the size
    /// of its filter, which every writer keeps up to date whatever its own configuration.
    pub(super) async fn begin_write(&self, ns: Namespace, op: &'static str) -> Result<Option<Geometry>> {
        if ns != Namespace::Sections {
            self.ensure_marker(op).await?;
            return Ok(None);
        }
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        let values = self.run(op, vec![self.marker_cmd(), size]).await?;
        self.check_marker(values.first().unwrap_or(&Value::Nil))?;
        stored_geometry(values.get(1))
    }

    /// Set the filter bits of `keys`, then bump the filter's version; both before the
    /// keys' postings are written (the order [`filter`] relies on).
    pub(super) async fn add_to_filter<'k>(
        &self,
        geometry: Geometry,
        keys: impl Iterator<Item = &'k IndexKey>,
    ) -> Result<()> {
        let mut by_shard: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for key in keys {
            for (shard, bit) in geometry.probes(key_hash(key)) {
                by_shard.entry(shard).or_default().push(bit);
            }
        }
        let mut cmds = Vec::new();
        for (shard, mut bits) in by_shard {
            bits.sort_unstable();
            bits.dedup();
            for chunk in bits.chunks(FILTER_BITS_PER_COMMAND) {
                let mut cmd = redis::cmd("BITFIELD");
                cmd.arg(self.filter_shard_key(shard));
                for bit in chunk {
                    cmd.arg("SET").arg("u1").arg(*bit).arg(1);
                }
                cmds.push(cmd);
            }
        }
        self.run("set section filter bits", cmds).await?;
        let mut bump = redis::cmd("INCR");
        bump.arg(self.filter_version_key());
        self.run("bump section filter version", vec![bump]).await?;
        Ok(())
    }

    /// The section filter a lookup uses: the current snapshot when it is fresh, else a
    /// new one, loaded by one lookup at a time and at most once per
    /// [`filter::refresh_interval`]. `None` (read every key) when this process reads no
    /// filter, the index has none, or another lookup is loading it.
    pub(super) async fn filter_snapshot(&self) -> Result<Option<Arc<filter::Snapshot>>> {
        if self.config.section_filter_mb == 0 {
            return Ok(None);
        }
        if let Some(snapshot) = self.filter.fresh() {
            return Ok(Some(snapshot));
        }
        let Ok(mut last_load) = self.filter.loading.try_lock() else { return Ok(None) };
        if let Some(snapshot) = self.filter.fresh() {
            return Ok(Some(snapshot));
        }
        if last_load.is_some_and(|t| t.elapsed() < filter::refresh_interval(self.config.section_filter_mb)) {
            return Ok(None);
        }
        *last_load = Some(Instant::now());
        let snapshot = self.load_filter().await?;
        self.filter.replace(snapshot.clone());
        Ok(snapshot)
    }

    pub(super) async fn load_filter(&self) -> Result<Option<Arc<filter::Snapshot>>> {
        let mut version = redis::cmd("GET");
        version.arg(self.filter_version_key());
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        // The version before the bits: the bits read next hold every write it counts.
        let head = self.run("load section filter", vec![version, size]).await?;
        let version = head.first().map(int).transpose()?.unwrap_or(0);
        let Some(geometry) = stored_geometry(head.get(1))? else {
            if !self.filter.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(
                    url = %self.shown_url,
                    prefix = %self.config.prefix,
                    "section_filter_mb is set but the index was built without a section filter: \
                     lookups read every key until `zhiwen reindex` rebuilds it with one"
                );
            }
            return Ok(None);
        };
        let shards = self
            .run("load section filter", self.per_filter_shard("GET"))
            .await?
            .into_iter()
            .map(|v| match v {
                Value::Nil => Ok(Vec::new()),
                Value::BulkString(bytes) => Ok(bytes),
                other => Err(IndexError::Corrupt(format!("section filter shard: {other:?}"))),
            })
            .collect::<Result<Vec<_>>>()?;
        let snapshot = filter::Snapshot::new(version, geometry, shards);
        let fill = snapshot.fill();
        if fill > 0.5 {
            tracing::warn!(
                fill,
                "the section filter is more than half full, so lookups skip few keys: \
                 raise section_filter_mb and run `zhiwen reindex`"
            );
        }
        tracing::debug!(version, fill, "section filter loaded");
        Ok(Some(Arc::new(snapshot)))
    }

    /// The section filter's size and the bits set (`BITCOUNT` on the server: the filter
    /// is not transferred), or `None` when the index has no filter.
    pub(super) async fn filter_stats(&self) -> Result<Option<FilterStats>> {
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        let v: Value = self.query_one(size).await.map_err(self.err("stats"))?;
        let Some(geometry) = stored_geometry(Some(&v))? else { return Ok(None) };
        let mut bits_set = 0u64;
        for v in self.run("stats", self.per_filter_shard("BITCOUNT")).await? {
            bits_set += int(&v)?.max(0) as u64;
        }
        Ok(Some(FilterStats { bits: geometry.bits, bits_set }))
    }
}
