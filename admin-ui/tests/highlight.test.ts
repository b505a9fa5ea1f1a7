import { cpLength, mergeRanges, passageSegments, segmentsByRanges, splitMarkup } from '../src/lib/highlight';

const join = (segs: { text: string }[]) => segs.map((s) => s.text).join('');
const marked = (segs: { text: string; marked: boolean }[]) => segs.filter((s) => s.marked).map((s) => s.text);

describe('mergeRanges', () => {
  it('sorts, merges overlapping and touching ranges, drops empty ones', () => {
    expect(mergeRanges([[10, 12], [0, 3], [2, 5], [5, 6], [8, 8]])).toEqual([[0, 6], [10, 12]]);
  });
});

describe('segmentsByRanges', () => {
  const text = '此开卷第一回也。作者自云：因曾历过一番梦幻之后。';
  it('marks exactly the given code-point ranges and keeps the text intact', () => {
    const segs = segmentsByRanges(text, [[0, 7], [13, 18]]);
    expect(join(segs)).toBe(text);
    expect(marked(segs)).toEqual(['此开卷第一回也', '因曾历过一']);
  });
  it('counts offsets in code points, so rare characters outside the BMP do not shift the marks', () => {
    const t = '𠮷野家的𠮷字与吉字不同';
    expect(t.length).toBe(13); // UTF-16 units
    expect(cpLength(t)).toBe(11);
    const segs = segmentsByRanges(t, [[4, 6]]);
    expect(marked(segs)).toEqual(['𠮷字']);
    expect(join(segs)).toBe(t);
  });
  it('clips ranges past the end and merges overlaps from several passages', () => {
    const segs = segmentsByRanges('甲乙丙丁', [[2, 99], [1, 3]]);
    expect(segs).toEqual([
      { text: '甲', marked: false },
      { text: '乙丙丁', marked: true },
    ]);
  });
  it('gives one unmarked segment when nothing was copied', () => {
    expect(segmentsByRanges('甲乙', [])).toEqual([{ text: '甲乙', marked: false }]);
    expect(segmentsByRanges('', [[0, 3]])).toEqual([]);
  });
});

describe('passageSegments', () => {
  it('marks the copied span between its context', () => {
    expect(passageSegments({ before: '……前文', text: '此開卷第一回也', after: '後文……' })).toEqual([
      { text: '……前文', marked: false },
      { text: '此開卷第一回也', marked: true },
      { text: '後文……', marked: false },
    ]);
    expect(passageSegments({ before: '', text: '全文', after: '' })).toEqual([{ text: '全文', marked: true }]);
  });
});

describe('splitMarkup', () => {
  it('separates tags from text and keeps the quote intact', () => {
    const q = '紅樓夢 第一回</h1> <div id="content"> 此開卷第一回也';
    const toks = splitMarkup(q);
    expect(toks.map((t) => t.text).join('')).toBe(q);
    expect(toks.filter((t) => t.markup).map((t) => t.text)).toEqual(['</h1>', '<div id="content">']);
    expect(splitMarkup('a < b 且 c > d')).toEqual([{ text: 'a < b 且 c > d', markup: false }]);
  });
});

describe('splitMarkup on cut context', () => {
  it('treats a tag cut at either end of the context as markup', () => {
    const toks = splitMarkup('/div>\n<h1>紅樓夢</h1> 正文 <div cla');
    expect(toks.map((t) => t.text).join('')).toBe('/div>\n<h1>紅樓夢</h1> 正文 <div cla');
    expect(toks[0]).toEqual({ text: '/div>', markup: true });
    expect(toks.at(-1)).toEqual({ text: '<div cla', markup: true });
    expect(toks.filter((t) => !t.markup).map((t) => t.text)).toEqual(['\n', '紅樓夢', ' 正文 ']);
  });
});
