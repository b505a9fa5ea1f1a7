import { chapterLabel, count, explainMatch, fillDays, percent, scoreLevel, scoreWords } from '../src/lib/format';

describe('percent', () => {
  it('rounds to whole percents and keeps small non-zero values visible', () => {
    expect(percent(0.78)).toBe('78%');
    expect(percent(0.784)).toBe('78%');
    expect(percent(0.004)).toBe('0.4%');
    expect(percent(0)).toBe('0%');
    expect(percent(1)).toBe('100%');
  });
  it('never claims 100% for a partial copy and clamps out-of-range values', () => {
    expect(percent(0.996)).toBe('99%');
    expect(percent(1.2)).toBe('100%');
    expect(percent(-0.1)).toBe('0%');
    expect(percent(undefined)).toBe('—');
    expect(percent(Number.NaN)).toBe('—');
  });
});

describe('score words', () => {
  it('names the level of a score', () => {
    expect(scoreLevel(0.95)).toBe('high');
    expect(scoreLevel(0.6)).toBe('medium');
    expect(scoreLevel(0.59)).toBe('low');
    expect(scoreWords('zh', 0.95)).toBe('95% · 高度相似');
    expect(scoreWords('en', 0.3)).toBe('30% · partly similar');
  });
});

describe('explainMatch', () => {
  const m = { section_ordinal: 11, coverage: 0.78, copied_chars: 6320 };
  it('says in plain Chinese how much of which chapter is on the page', () => {
    expect(explainMatch('zh', m)).toBe('本页包含第12章 78% 的内容（共 6,320 字）。');
  });
  it('says the same in English', () => {
    expect(explainMatch('en', m)).toBe('78% of chapter 12 appears on this page (6,320 characters).');
  });
  it("prefers the API's explanation in the chosen language", () => {
    const api = { zh: '第12章「惊梦」78% 的内容出现在此网页上。', en: '78% of chapter 12 appears on this page.' };
    expect(explainMatch('zh', m, api)).toBe(api.zh);
    expect(explainMatch('en', m, api)).toBe(api.en);
    expect(explainMatch('zh', m, { zh: ' ', en: 'x' })).toBe('本页包含第12章 78% 的内容（共 6,320 字）。');
  });
  it('numbers chapters from 1', () => {
    expect(chapterLabel('zh', 0)).toBe('第1章');
    expect(chapterLabel('en', 0)).toBe('chapter 1');
  });
});

describe('count', () => {
  it('groups thousands', () => {
    expect(count(100233)).toBe('100,233');
    expect(count(null)).toBe('—');
  });
});

describe('fillDays', () => {
  it('fills days without matches with zeros, in order, both ends included', () => {
    const days = fillDays('2026-11-18', '2026-11-21', [
      { day: '2026-11-21', count: 12 },
      { day: '2026-11-19', count: 3 },
    ]);
    expect(days).toEqual([
      { day: '2026-11-18', count: 0 },
      { day: '2026-11-19', count: 3 },
      { day: '2026-11-20', count: 0 },
      { day: '2026-11-21', count: 12 },
    ]);
  });
  it('crosses month ends and leap days', () => {
    const days = fillDays('2028-02-28', '2028-03-01', []);
    expect(days.map((d) => d.day)).toEqual(['2028-02-28', '2028-02-29', '2028-03-01']);
  });
  it('returns the given days when the range is unusable', () => {
    expect(fillDays('bad', '2026-11-21', [{ day: '2026-11-21', count: 1 }])).toEqual([{ day: '2026-11-21', count: 1 }]);
  });
});
