//! Reading and writing the fields of BSON documents: typed getters that call a missing
//! or mistyped field corrupt, timestamps as BSON dates, binary data, range filters.

use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{Binary, Bson, DateTime, Document};

use crate::model::Timestamp;
use crate::traits::StoreResult;
use crate::StoreError;

pub(super) fn bin(bytes: Vec<u8>) -> Bson {
    Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes })
}

pub(super) fn date(t: Timestamp) -> Bson {
    Bson::DateTime(DateTime::from_millis(t.0))
}

pub(super) fn corrupt(doc: &Document, key: &str) -> StoreError {
    StoreError::corrupt(format!("field {key} of {:?}", doc.get("_id")), "missing or of the wrong type")
}

pub(super) fn num(doc: &Document, key: &str) -> StoreResult<i64> {
    match doc.get(key) {
        Some(Bson::Int64(v)) => Ok(*v),
        Some(Bson::Int32(v)) => Ok(*v as i64),
        Some(Bson::Double(v)) if v.fract() == 0.0 => Ok(*v as i64),
        _ => Err(corrupt(doc, key)),
    }
}

pub(super) fn opt_num(doc: &Document, key: &str) -> StoreResult<Option<i64>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        _ => num(doc, key).map(Some),
    }
}

pub(super) fn float(doc: &Document, key: &str) -> StoreResult<f64> {
    match doc.get(key) {
        Some(Bson::Double(v)) => Ok(*v),
        Some(Bson::Int64(v)) => Ok(*v as f64),
        Some(Bson::Int32(v)) => Ok(*v as f64),
        _ => Err(corrupt(doc, key)),
    }
}

pub(super) fn string(doc: &Document, key: &str) -> StoreResult<String> {
    doc.get_str(key).map(str::to_owned).map_err(|_| corrupt(doc, key))
}

pub(super) fn opt_string(doc: &Document, key: &str) -> StoreResult<Option<String>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::String(s)) => Ok(Some(s.clone())),
        _ => Err(corrupt(doc, key)),
    }
}

pub(super) fn time(doc: &Document, key: &str) -> StoreResult<Timestamp> {
    match doc.get(key) {
        Some(Bson::DateTime(d)) => Ok(Timestamp(d.timestamp_millis())),
        _ => num(doc, key).map(Timestamp),
    }
}

pub(super) fn opt_time(doc: &Document, key: &str) -> StoreResult<Option<Timestamp>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        _ => time(doc, key).map(Some),
    }
}

pub(super) fn json_field<T: serde::de::DeserializeOwned>(doc: &Document, key: &str) -> StoreResult<T> {
    let s = string(doc, key)?;
    serde_json::from_str(&s).map_err(|e| StoreError::corrupt(format!("field {key} of {:?}", doc.get("_id")), e))
}

/// Add `field: {low_op: low, high_op: high}` to a filter, with only the given bounds;
/// nothing when neither is given.
pub(super) fn insert_range<L: Into<Bson>, H: Into<Bson>>(
    filter: &mut Document,
    field: &str,
    (low_op, low): (&str, Option<L>),
    (high_op, high): (&str, Option<H>),
) {
    let mut range = Document::new();
    if let Some(v) = low {
        range.insert(low_op, v);
    }
    if let Some(v) = high {
        range.insert(high_op, v);
    }
    if !range.is_empty() {
        filter.insert(field, range);
    }
}
