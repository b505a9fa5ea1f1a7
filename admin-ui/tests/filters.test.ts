import { filtersToQuery, queryToFilters, sortOf } from '../src/lib/filters';

describe('filtersToQuery', () => {
  it('puts only the set filters into the query, in a fixed order', () => {
    const qs = filtersToQuery({ status: 'new', work_id: 7, site: ' Pirate.Example ', min_score: 0.6, kind: 'excerpt' });
    expect(qs.toString()).toBe('work_id=7&site=pirate.example&kind=excerpt&status=new&min_score=0.6');
  });
  it('leaves out the default sort, a zero minimum and a maximum of 1', () => {
    expect(filtersToQuery({ sort: '-last_seen', min_score: 0, max_score: 1 }).toString()).toBe('');
    expect(filtersToQuery({ sort: '-score' }).toString()).toBe('sort=-score');
  });
  it('clamps and rounds scores', () => {
    expect(filtersToQuery({ min_score: 0.6000000001 }).get('min_score')).toBe('0.6');
    expect(filtersToQuery({ max_score: 0.5 }).get('max_score')).toBe('0.5');
  });
  it('passes date ranges through', () => {
    expect(filtersToQuery({ from: '2026-11-01', to: '2026-11-21' }).toString()).toBe('from=2026-11-01&to=2026-11-21');
  });
});

describe('queryToFilters', () => {
  it('reads back what filtersToQuery wrote', () => {
    const f = { work_id: 7, section_id: 21, site: 'pirate.example', kind: 'excerpt', status: 'confirmed' as const, min_score: 0.75, from: '2026-11-01', to: '2026-11-21', sort: 'score' as const };
    expect(queryToFilters(filtersToQuery(f))).toEqual(f);
  });
  it('drops malformed values instead of guessing', () => {
    const f = queryToFilters(new URLSearchParams('work_id=7x&status=stolen&min_score=2&from=21.11.2026&sort=random&site='));
    expect(f).toEqual({});
  });
});

describe('sortOf', () => {
  it('maps table sorters to API sorts', () => {
    expect(sortOf('score', 'descend')).toBe('-score');
    expect(sortOf('first_seen', 'ascend')).toBe('first_seen');
    expect(sortOf('score', null)).toBeUndefined();
    expect(sortOf('url', 'ascend')).toBeUndefined();
  });
});
