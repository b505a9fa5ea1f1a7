//! Rebuilding the derived index from the documents' keys (`zhiwen reindex`).

use futures::{Stream, StreamExt};
use zhiwen_core::IndexKey;

use crate::{CandidateIndex, DocId, IndexError, Namespace, Result};

/// Documents per `add_batch` call during a rebuild.
const BATCH_DOCS: usize = 512;

/// What a rebuild did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Documents indexed.
    pub documents: u64,
    /// Keys sent (before deduplication by the index).
    pub keys: u64,
}

/// Clear `ns` and index every document of `docs` in batches.
pub async fn rebuild<I>(index: &dyn CandidateIndex, ns: Namespace, docs: I) -> Result<RebuildReport>
where
    I: IntoIterator<Item = (DocId, Vec<IndexKey>)>,
{
    let stream = futures::stream::iter(docs.into_iter().map(Ok::<_, std::convert::Infallible>));
    rebuild_stream(index, ns, stream).await
}

/// Clear `ns` and index every document of a fallible stream (e.g. a cursor over the
/// fingerprint store) in batches. The first source error stops the rebuild and is
/// returned as [`IndexError::Source`]; the index is then partial and the rebuild must
/// be run again.
pub async fn rebuild_stream<S, E>(index: &dyn CandidateIndex, ns: Namespace, docs: S) -> Result<RebuildReport>
where
    S: Stream<Item = std::result::Result<(DocId, Vec<IndexKey>), E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    index.clear(ns).await?;
    let mut report = RebuildReport::default();
    let mut batch = Vec::with_capacity(BATCH_DOCS);
    let mut docs = std::pin::pin!(docs);
    while let Some(item) = docs.next().await {
        let (doc, keys) = item.map_err(|e| IndexError::Source(e.into()))?;
        report.documents += 1;
        report.keys += keys.len() as u64;
        batch.push((doc, keys));
        if batch.len() == BATCH_DOCS {
            index.add_batch(ns, &batch).await?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        index.add_batch(ns, &batch).await?;
    }
    tracing::info!(namespace = ns.as_str(), documents = report.documents, keys = report.keys, "index rebuilt");
    Ok(report)
}
