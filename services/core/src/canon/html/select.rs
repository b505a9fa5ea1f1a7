//! Main-content selection: which paragraphs of the lexed page are the text.

use super::{Container, Para};

/// Paragraph classes for main-content selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Good,
    Bad,
    Near,
    Short,
}

/// Weights in thirds of a character (see [`Para::weight`]).
const GOOD_WEIGHT: u32 = 20 * 3;
const SHORT_WEIGHT: u32 = 8 * 3;
const LONG_WEIGHT: u32 = 200 * 3;
const HEADING_DISTANCE: u32 = 200 * 3;
const HEADING_MAX_PARAS: usize = 64;

/// Main-content selection, after jusText (Pomikálek 2011) reduced to what Chinese pages
/// need: boilerplate containers are dropped unless they hold half the page's text; the
/// rest is classified by length and link density, and short or medium paragraphs take
/// the class of their neighbours, so dialogue lines between chapter paragraphs stay and
/// labels between link lists go.
pub(super) fn select(paras: &[Para], containers: &[Container]) -> Vec<bool> {
    let n = paras.len();
    let total: u64 = paras.iter().map(|p| u64::from(p.weight)).sum();
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0u64);
    for p in paras {
        let last = prefix.last().copied().unwrap_or(0);
        prefix.push(last + u64::from(p.weight));
    }
    // Difference array over paragraph ranges of dropped containers.
    let mut diff = vec![0i64; n + 1];
    for c in containers {
        let first = (c.first_para as usize).min(n);
        let end = (c.end_para as usize).clamp(first, n);
        let w = prefix[end] - prefix[first];
        if w * 2 < total {
            diff[first] += 1;
            diff[end] -= 1;
        }
    }
    let mut dropped = vec![false; n];
    let mut depth = 0i64;
    for i in 0..n {
        depth += diff[i];
        dropped[i] = depth > 0;
    }

    let mut class: Vec<Class> = paras
        .iter()
        .map(|p| {
            let (w, l) = (u64::from(p.weight), u64::from(p.link));
            let breadcrumb = p.links >= 2 && p.separators >= 1 && p.separators + 1 >= p.links;
            if w > 0 && ((l * 2 > w || breadcrumb) && w < u64::from(LONG_WEIGHT) || l * 5 > w * 4) {
                Class::Bad
            } else if w >= u64::from(GOOD_WEIGHT) && l * 10 <= w * 3 {
                Class::Good
            } else if w < u64::from(SHORT_WEIGHT) {
                Class::Short
            } else {
                Class::Near
            }
        })
        .collect();
    let live: Vec<usize> = (0..n).filter(|&i| !dropped[i]).collect();

    // Headings that open good content within a short distance belong to it.
    for (k, &i) in live.iter().enumerate() {
        if !paras[i].heading || !matches!(class[i], Class::Short | Class::Near) {
            continue;
        }
        let mut distance = 0u32;
        for &j in live[k + 1..].iter().take(HEADING_MAX_PARAS) {
            if class[j] == Class::Good {
                class[i] = Class::Good;
                break;
            }
            distance = distance.saturating_add(paras[j].weight);
            if distance > HEADING_DISTANCE {
                break;
            }
        }
    }
    resolve(&live, &mut class, Class::Near, &[Class::Near, Class::Short]);
    resolve(&live, &mut class, Class::Short, &[Class::Short]);

    let mut keep: Vec<bool> = (0..n).map(|i| !dropped[i] && class[i] == Class::Good).collect();
    let kept_weight = |keep: &[bool]| -> u64 { (0..n).filter(|&i| keep[i]).map(|i| u64::from(paras[i].weight)).sum() };
    if kept_weight(&keep) == 0 {
        // No main content stands out (a short page, a bare fragment): keep what is not
        // boilerplate, then everything, rather than lose the page.
        keep = (0..n).map(|i| !dropped[i] && class[i] != Class::Bad).collect();
        if kept_weight(&keep) == 0 {
            keep = (0..n).map(|i| !dropped[i]).collect();
        }
        if kept_weight(&keep) == 0 {
            keep = vec![true; n];
        }
    }
    keep
}

/// Give each paragraph of class `which` the class Good if a neighbour (the nearest
/// paragraph on each side whose class is not in `skip`) is Good, else Bad.
fn resolve(live: &[usize], class: &mut [Class], which: Class, skip: &[Class]) {
    let m = live.len();
    // Nearest decided class before and after each live position.
    let mut before = vec![None; m];
    let mut last = None;
    for k in 0..m {
        before[k] = last;
        let c = class[live[k]];
        if !skip.contains(&c) {
            last = Some(c);
        }
    }
    let mut after = vec![None; m];
    last = None;
    for k in (0..m).rev() {
        after[k] = last;
        let c = class[live[k]];
        if !skip.contains(&c) {
            last = Some(c);
        }
    }
    for k in 0..m {
        let i = live[k];
        if class[i] == which {
            let good = before[k] == Some(Class::Good) || after[k] == Some(Class::Good);
            class[i] = if good { Class::Good } else { Class::Bad };
        }
    }
}
