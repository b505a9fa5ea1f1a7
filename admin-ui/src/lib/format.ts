import type { Lang, Key } from '../i18n/dict';
import { translate } from '../i18n/dict';

/** `0.78` -> `78%`; small non-zero values keep one decimal (`0.4%`), never round up to 100%. */
export function percent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—';
  const p = Math.min(1, Math.max(0, ratio)) * 100;
  if (p > 0 && p < 1) return `${p.toFixed(1)}%`;
  if (p > 99 && p < 100) return '99%';
  return `${Math.round(p)}%`;
}

/** Words for a score: high >= 0.9, medium >= 0.6, low otherwise. */
export function scoreLevel(score: number): 'high' | 'medium' | 'low' {
  if (score >= 0.9) return 'high';
  if (score >= 0.6) return 'medium';
  return 'low';
}

export function scoreWords(lang: Lang, score: number): string {
  return `${percent(score)} · ${translate(lang, `score.${scoreLevel(score)}` as Key)}`;
}

/** Chapter label from a 0-based ordinal: `第12章` / `chapter 12`. */
export function chapterLabel(lang: Lang, ordinal: number): string {
  return translate(lang, 'evidence.chapterN', { n: ordinal + 1 });
}

/** Thousands separators in both languages (`6,320`). */
export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/**
 * The plain-words explanation of a match, e.g. `本页包含第12章 78% 的内容（共 6,320 字）。`.
 * The API's own explanation is preferred when present; this is the fallback.
 */
export function explainMatch(
  lang: Lang,
  m: { section_ordinal: number; coverage: number; copied_chars: number },
  fromApi?: { zh: string; en: string } | null,
): string {
  const api = fromApi?.[lang]?.trim();
  if (api) return api;
  return translate(lang, 'evidence.explain', {
    chapter: chapterLabel(lang, m.section_ordinal),
    pct: percent(m.coverage),
    chars: count(m.copied_chars),
  });
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Local date and time, `2026-11-21 14:05`. */
export function dateTime(ms: number | null | undefined): string {
  if (!ms) return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** UTC day `YYYY-MM-DD` of a time. */
export function utcDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/**
 * Every day from `from` to `to` (inclusive, `YYYY-MM-DD`) with its count; days the API
 * omitted (no matches) become 0, so the trend chart shows gaps as zeros, not as lines
 * across missing days.
 */
export function fillDays(from: string, to: string, byDay: { day: string; count: number }[]): { day: string; count: number }[] {
  const counts = new Map(byDay.map((d) => [d.day, d.count]));
  const out: { day: string; count: number }[] = [];
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) return byDay.slice();
  for (let t = start; t <= end && out.length < 3700; t += 86_400_000) {
    const day = utcDay(t);
    out.push({ day, count: counts.get(day) ?? 0 });
  }
  return out;
}

/** A file size in words: `812 B`, `12.3 KB`, `4.1 MB` (1024-based). */
export function fileSize(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return '—';
  if (n < 1024) return `${Math.round(n)} B`;
  const units = ['KB', 'MB', 'GB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** The first 12 hex digits of a SHA-256, enough to tell files apart on screen. */
export function shortHash(hex: string): string {
  return hex.length > 12 ? `${hex.slice(0, 12)}…` : hex;
}
