// Highlighting copied text. Offsets from the API are Unicode scalar values (code points),
// not UTF-16 units: a rare character such as 𠮷 counts once there and twice in a JS string.

export interface Segment {
  text: string;
  marked: boolean;
}

/** Half-open `[start, end)` ranges, sorted and merged where they overlap or touch. */
export function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.filter(([s, e]) => e > s).map(([s, e]) => [Math.max(0, s), e] as [number, number]);
  sorted.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/**
 * Split `text` into marked and unmarked segments by code-point ranges (clipped to the
 * text). Joining the segments' texts always gives `text` back.
 */
export function segmentsByRanges(text: string, ranges: [number, number][]): Segment[] {
  const chars = Array.from(text);
  const n = chars.length;
  const merged = mergeRanges(ranges.map(([s, e]) => [Math.min(s, n), Math.min(e, n)] as [number, number]));
  const out: Segment[] = [];
  let pos = 0;
  for (const [s, e] of merged) {
    if (s > pos) out.push({ text: chars.slice(pos, s).join(''), marked: false });
    out.push({ text: chars.slice(s, e).join(''), marked: true });
    pos = e;
  }
  if (pos < n) out.push({ text: chars.slice(pos).join(''), marked: false });
  return out;
}

/** A passage side as the API gives it: context before, the copied span, context after. */
export function passageSegments(side: { before: string; text: string; after: string }): Segment[] {
  const out: Segment[] = [];
  if (side.before) out.push({ text: side.before, marked: false });
  if (side.text) out.push({ text: side.text, marked: true });
  if (side.after) out.push({ text: side.after, marked: false });
  return out;
}

/** Code-point length (what the API's offsets count). */
export function cpLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A piece of quoted page text: markup (`<div id="x">`) or text. */
export interface Token {
  text: string;
  markup: boolean;
}

/**
 * Split quoted HTML source into tags and text, so the dashboard can dim the markup that
 * sits between copied characters (the quote itself stays exactly as it is on the page).
 * Context cut in the middle of a tag (`id="content">` at the start, `<div cla` at the end)
 * counts as markup too.
 */
export function splitMarkup(s: string): Token[] {
  const head = /^[^<>\u2E80-\uFFFF\n]*>/.exec(s)?.[0] ?? '';
  const rest = s.slice(head.length);
  const tail = /<\/?[A-Za-z!][^<>]*$/.exec(rest)?.[0] ?? '';
  const middle = rest.slice(0, rest.length - tail.length);
  const out: Token[] = [];
  if (head) out.push({ text: head, markup: true });
  const re = /<\/?[A-Za-z!][^<>]*>/g;
  let pos = 0;
  for (let m = re.exec(middle); m; m = re.exec(middle)) {
    if (m.index > pos) out.push({ text: middle.slice(pos, m.index), markup: false });
    out.push({ text: m[0], markup: true });
    pos = m.index + m[0].length;
  }
  if (pos < middle.length) out.push({ text: middle.slice(pos), markup: false });
  if (tail) out.push({ text: tail, markup: true });
  return out;
}
